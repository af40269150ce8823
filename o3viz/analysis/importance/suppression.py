"""Attention suppression (Thought Anchors, white-box): the step × step causal matrix.

For each step i, every layer's attention to step i's tokens is masked (``o3viz.hooks.suppress``),
and each later step j's next-token distributions are compared with the unmasked pass:
``M[j, i]`` = mean over j's token positions of KL(unmasked ‖ masked), in nats.
A step's suppression score is the mean of its column over the later steps.

Cost: one unmasked pass keeps its KV cache; positions before step i cannot see step i, so the
masked pass for step i starts from that cache cropped at step i's first token and only runs the
rest. ``batch`` consecutive steps share one cropped prefix and run as one batch (row b masks its
own step). The suffix runs in chunks of ``CHUNK`` query rows, so a mask is (B, 1, CHUNK, T).
Only final hidden states are kept; logits are formed ``LOGIT_ROWS`` rows at a time for the KL.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from o3viz.analysis.importance.reading import ReadSequence, read_sequence
from o3viz.clients.local import fork_cache
from o3viz.hooks.suppress import suppressing
from o3viz.trace import Trace
from o3viz.trace.importance import ImportanceRecord

CHUNK = 512  # query rows per forward chunk
LOGIT_ROWS = 256  # rows of (vocab-sized) logits alive at a time
DEFAULT_BATCH = 4


def _run(model, ids: torch.Tensor, cache, suppressed: torch.Tensor | None) -> torch.Tensor:
    """Final hidden states (B, Q, d) of ``ids`` (B, Q) appended to ``cache``, chunk by chunk."""
    out = []
    with suppressing(model, suppressed):
        for s in range(0, ids.shape[1], CHUNK):
            h = model.get_decoder()(input_ids=ids[:, s : s + CHUNK], past_key_values=cache, use_cache=True)
            out.append(h.last_hidden_state)
    return torch.cat(out, dim=1)


def _kl_rows(head, base_h: torch.Tensor, masked_h: torch.Tensor) -> torch.Tensor:
    """(R,) KL(base ‖ masked) per row of final hidden states (R, d), in blocks of rows."""
    out = []
    for s in range(0, base_h.shape[0], LOGIT_ROWS):
        lp = torch.log_softmax(head(base_h[s : s + LOGIT_ROWS]).float(), -1)
        lq = torch.log_softmax(head(masked_h[s : s + LOGIT_ROWS]).float(), -1)
        out.append((lp.exp() * (lp - lq)).sum(-1).clamp(min=0))
    return torch.cat(out) if out else torch.zeros(0)


def suppression_matrix(
    model: Any,
    seq: ReadSequence,
    *,
    batch: int = DEFAULT_BATCH,
    on_progress: Callable[[int, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> np.ndarray:
    """(S, S) float32: ``M[j, i]`` = mean KL of the next-token distributions at step j's tokens
    when step i's tokens are masked (j > i; zero elsewhere)."""
    from transformers import DynamicCache

    device = next(model.parameters()).device
    ids = torch.tensor([seq.ids], device=device)
    n, head = len(seq.steps), model.get_output_embeddings()
    mat = np.zeros((n, n), dtype=np.float32)
    with torch.inference_mode():
        base = DynamicCache(config=model.config)
        base_h = _run(model, ids, base, None)[0]  # (T, d)
        for i0 in range(0, n - 1, batch):
            if should_stop is not None and should_stop():
                break
            rows = list(range(i0, min(n - 1, i0 + batch)))
            start = seq.steps[i0][0]
            sup = torch.zeros(len(rows), ids.shape[1], dtype=torch.bool, device=device)
            for b, i in enumerate(rows):
                sup[b, seq.steps[i][0] : seq.steps[i][1]] = True
            cache = fork_cache(model, base, start, len(rows))
            masked = _run(model, ids[:, start:].expand(len(rows), -1), cache, sup)  # (B, T-start, d)
            for b, i in enumerate(rows):
                mat[:, i] = _column(head, seq, base_h, masked[b], start, i)
            if on_progress is not None:
                on_progress(rows[-1] + 1, n - 1)
    return mat


def _column(head, seq: ReadSequence, base_h, masked_h, start: int, i: int) -> np.ndarray:
    """Mean KL per later step j > i over the next-token distributions at j's own positions."""
    lo, hi = seq.steps[i + 1][0], seq.steps[-1][1]
    kl = _kl_rows(head, base_h[lo:hi], masked_h[lo - start : hi - start]).cpu().numpy()
    col = np.zeros(len(seq.steps), dtype=np.float32)
    for j in range(i + 1, len(seq.steps)):
        a, b = seq.steps[j][0] - lo, seq.steps[j][1] - lo
        if b > a:
            col[j] = float(kl[a:b].mean())
    return col


def suppression_importance(
    trace: Trace,
    model: Any,
    tokenizer: Any,
    *,
    batch: int = DEFAULT_BATCH,
    round_index: int = -1,
    retokenize: bool = False,
    max_tokens: int | None = None,
    min_weight: float = 0.2,
    on_progress: Callable[[int, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> ImportanceRecord:
    """The suppression record of one round: scores, the (S, S) matrix and ``depends_on`` edges."""
    from o3viz.analysis.importance.dependencies import dependencies_from_matrix

    seq = read_sequence(
        trace, model, tokenizer, round_index=round_index, retokenize=retokenize, max_tokens=max_tokens
    )
    mat = suppression_matrix(model, seq, batch=batch, on_progress=on_progress, should_stop=should_stop)
    n_all = len(trace.rounds[round_index].steps)
    full = np.zeros((n_all, n_all), dtype=np.float32)
    full[: seq.num_steps, : seq.num_steps] = mat
    scores: list[float | None] = [None] * n_all
    for i in range(seq.num_steps - 1):
        scores[i] = float(mat[i + 1 :, i].mean())
    stopped = bool(should_stop and should_stop())
    return ImportanceRecord(
        method="suppression",
        source="suppression",
        scores=scores,
        matrix=full,
        depends_on=dependencies_from_matrix(full, min_weight=min_weight),
        params={
            "batch": batch,
            "tokens": len(seq.ids),
            "steps_read": seq.num_steps,
            "min_weight": min_weight,
        },
        model=seq.reader,
        info={
            "matrix": "mean KL (nats) of step j's next-token distributions when step i is masked",
            "complete": not stopped,
        },
    )
