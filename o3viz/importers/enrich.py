"""Enrichment: teacher-forcing an imported trace through a local model to give it tokens (with the
local model's logprob, entropy and top-5 alternatives) and attention.

The question is rendered with the model's chat template (``o3viz.run.prompt.layout_prompt``,
the same layout a local ``capture`` uses, so the two can be compared), the imported
``round.text`` follows it, and the whole sequence goes through the model without sampling.

Memory linear in length: each window goes through the model in chunks of query rows with a KV
cache (``chunk`` rows; default ``chunk_rows``: one chunk's (rows, keys) fp32 sums within
``CHUNK_BYTES``, 2,048 rows at 8k keys, 512 at 32k). A chunk's rows are complete after its own
forward through all layers, so they are reduced right away to what the trace keeps: the mean rows
(dense, or with the storage plan's ``rows == "top_k"`` only each row's top-k (value, key) pairs),
the per-head rows of the kept layers (dense or top-k pairs), the prompt shares and the step
allocation, accumulated step by step from the full rows before any cut (``StepAllocation``,
``o3viz.run.allocation`` semantics). Nothing of size tokens² is alive in torch: one chunk's sums,
one block of probabilities (``o3viz.hooks.blocks``; the recorder tells the kernel the forward is
an unpadded causal chunk, so each block computes only the keys it can see) and the (rows, keys)
mask transformers builds for the chunk (not read). The KV cache is linear: 2 × layers × KV heads
× head size values per token (46 KB per token for the fp32 embedded model). What stays
quadratic is the record itself when its rows are dense (``AttentionRecord.mean`` a (G, C) fp16
array, short texts only): when the storage plan cuts them to top-k, ``mean`` holds the pairs
(``o3viz.trace.attention.PairRows``), in memory as in the file.

Windows: the model sees at most ``window`` tokens (default: its context length,
``max_position_embeddings``, the length it was trained to read). When the prompt plus the text
is longer, the text goes through overlapping windows: every window holds the full prompt and a
span of the text, consecutive spans share ``overlap`` tokens, and each text token's attention row
is taken from the window in which it has the most earlier text in view (the first window for the
opening tokens; later windows skip their first ``overlap`` tokens). Positions are window-local.
Keys outside a row's window are zero in ``mean``. ``attention.info["windows"]`` lists each
window's text-token span and the rows it supplied. A ``window`` above the context is allowed (the
whole text in one chunked pass, positions past the context extrapolated by the model's position
encoding, said in ``info["positions"]``): memory stays linear, fidelity is the model's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from o3viz.errors import UsageError
from o3viz.hooks.blockwise import ATTN_NAME, WindowRecorder, recording
from o3viz.importers.enrich_rows import EnrichRows, StepAllocation, chunk_rows
from o3viz.run.loop import token_stats_rows
from o3viz.run.sizing import plan_storage
from o3viz.text.spans import token_ranges
from o3viz.trace import Alt, AttentionRecord, Token, Trace
from o3viz.trace.attention import top_k_pairs

MAX_PER_HEAD_BYTES = 1 << 30  # per-head rows of the kept layers, fp16
LOGIT_ROWS = 256  # rows of logits alive at a time (vocab 49k × 256 fp32 = 50 MB)


@dataclass
class Window:
    """Text tokens ``[start, end)`` are in view; rows ``[row_start, end)`` come from this window."""

    start: int
    end: int
    row_start: int

    def to_dict(self) -> dict:
        return {"text_tokens": [self.start, self.end], "rows": [self.row_start, self.end]}


def plan_windows(num_tokens: int, capacity: int, overlap: int) -> list[Window]:
    """Windows of at most ``capacity`` text tokens, consecutive ones sharing ``overlap`` tokens.

    >>> [w.to_dict()["rows"] for w in plan_windows(10, 6, 2)]
    [[0, 6], [6, 10]]
    """
    if capacity <= overlap:
        raise UsageError(f"window capacity {capacity} must exceed the overlap {overlap}")
    out, start = [], 0
    while True:
        end = min(num_tokens, start + capacity)
        out.append(Window(start, end, 0 if not out else out[-1].end))
        if end >= num_tokens:
            return out
        start = end - overlap


def enrich_trace(
    trace: Trace,
    *,
    model: Any = None,
    tokenizer: Any = None,
    layers: Any = (),
    window: int | None = None,
    overlap: int = 512,
    top_k: int = 5,
    chunk: int | None = None,
) -> Trace:
    """Fill ``trace.final`` with prompt tokens, tokens, step token ranges and ``attention``.

    ``model``/``tokenizer`` default to ``o3viz.model.load_model()``; ``model`` may also be a name or
    path for ``load_model``. ``layers`` are the layers whose per-head rows are kept ("auto", "all",
    "none" or indices). ``window``: tokens the model sees at once (default its context; may exceed
    it, see the module docstring); ``chunk``: query rows per forward (default ``chunk_rows``).
    """
    from o3viz.run.capture import resolve_layers
    from o3viz.run.prompt import layout_prompt, tokenize_with_offsets

    if model is None or isinstance(model, str):
        from o3viz.model import load_model

        model, tokenizer = load_model(model)
    rnd = trace.final
    cfg = model.config
    n_layers, n_heads = cfg.num_hidden_layers, cfg.num_attention_heads
    keep = resolve_layers(layers if layers is not None else (), n_layers)
    layout = layout_prompt(tokenizer, trace.task.question or "")
    ids, offsets = tokenize_with_offsets(tokenizer, rnd.text, add_special=False)
    p, g = len(layout.ids), len(ids)
    if g == 0:
        raise UsageError("the imported text has no tokens to enrich")
    context = int(getattr(cfg, "max_position_embeddings", 8192))
    window = window or context
    if p > window // 2:
        raise UsageError(f"the question is {p} tokens; enrichment needs it under half the window ({window})")
    if chunk is not None and chunk < 1:
        raise UsageError(f"chunk must be at least 1 query row, not {chunk}")
    # what fits in a trace, decided before the forward (one line when even the mean rows do not)
    plan = plan_storage(p, g, num_layers=n_layers, num_heads=n_heads, layers=keep, top_k=None, prefill=False, can_average=False)  # fmt: skip
    keep = plan.layers
    windows = plan_windows(g, window - p, min(overlap, (window - p) // 2))
    head_k = plan.top_k if plan.rows == "top_k" else None  # a long text: per-head rows as top-k pairs
    if head_k is not None and min(p + w.end - w.start for w in windows) <= head_k:
        head_k = None  # a window with fewer keys than k: dense rows, cut to pairs afterwards
    if keep and head_k is None and g * len(keep) * n_heads * (p + g) * 2 > MAX_PER_HEAD_BYTES:
        raise UsageError(
            f"per-head rows for layers {keep} would take more than {MAX_PER_HEAD_BYTES >> 20} MiB "
            "for this trace; pick fewer layers (--layers none keeps only the mean)"
        )
    _fill_round(rnd, layout, offsets)  # step token ranges: the allocation needs them
    rows_k = plan.rows_top_k if plan.rows == "top_k" else None
    out = EnrichRows(
        p, g, n_layers, n_heads, keep, head_k, rows_k, StepAllocation(p, rnd.segments, rnd.steps)
    )
    chunk = chunk or chunk_rows(p + g)  # a chunk's rows are C = P + G wide once placed
    stats = _run_windows(model, layout.ids, ids, windows, out, chunk, top_k)
    _fill_tokens(rnd, ids, offsets, stats, tokenizer)
    rnd.attention = _attention_record(out, p, n_layers, n_heads, windows, model)
    rnd.attention.info["forward"] = f"in chunks of {chunk} query rows with a KV cache"
    if window > context:
        rnd.attention.info["positions"] += (
            f"; the window ({window}) exceeds the model's context ({context}): later positions are extrapolated"
        )
    if plan.rows == "top_k":  # a long text: rows as top-k pairs, as a long capture keeps them
        _sparse_rows(rnd.attention, plan.rows_top_k, plan.top_k)
    rnd.attention.info["storage"] = plan.to_dict()
    trace.info["enrichment"] = dict(rnd.attention.info)
    return trace


def _run_windows(model, prompt_ids, ids, windows, out: EnrichRows, chunk: int, top_k: int) -> dict:
    """Forward every window in chunks of ``chunk`` query rows with a KV cache, each chunk's kept
    rows handed to ``out`` as soon as its forward ends; returns the per-token logprob / entropy /
    top-k of the local model."""
    from transformers import DynamicCache

    p, g = len(prompt_ids), len(ids)
    cfg = model.config
    n_layers, n_heads = cfg.num_hidden_layers, cfg.num_attention_heads
    stats = {
        "logprob": np.zeros(g, np.float32),
        "entropy": np.zeros(g, np.float32),
        "top_ids": np.zeros((g, top_k), np.int64),
        "top_p": np.zeros((g, top_k), np.float32),
    }
    device = next(model.parameters()).device
    with torch.inference_mode(), recording(model, None):  # one switch of the implementation
        for w in windows:
            seq = torch.tensor([list(prompt_ids) + list(ids[w.start : w.end])], device=device)
            lo, hi = p + w.row_start - w.start, seq.shape[1]  # window positions of the kept rows
            cache = DynamicCache(config=cfg)
            for a in range(0, hi, chunk):
                b = min(hi, a + chunk)
                r0, r1 = max(lo, a), max(lo, b)  # kept rows of this chunk (window positions)
                rec = WindowRecorder(r0 - a, r1 - a, b, p, n_layers, n_heads, out.keep, _head_k(out))
                rec.causal_chunk = True  # unpadded causal: each block reads only the keys it sees
                with recording(model, rec):
                    hidden = model.get_decoder()(
                        input_ids=seq[:, a:b],
                        past_key_values=cache,
                        use_cache=True,
                        position_ids=torch.arange(a, b, device=device)[None],
                    ).last_hidden_state[0]  # (b - a, d)
                # hidden row t - a predicts window token t + 1: kept tokens a+1 .. b
                t0, t1 = max(lo, a + 1), min(hi, b + 1)
                _token_scores(model, hidden, a, seq[0], t0, t1, w.row_start + t0 - lo, stats)
                del hidden
                if r1 > r0:
                    out.add(rec, w.row_start + r0 - lo, w.start, n_layers, n_heads)
                del rec
            del cache
    return stats


def _head_k(out: EnrichRows) -> int | None:
    """The per-head top-k of ``out`` (None: dense per-head rows or none kept)."""
    return None if out.per_head_top is None else out.per_head_top[0].shape[-1]


def _sparse_rows(att: AttentionRecord, rows_top_k: int, top_k: int) -> None:
    """Keep each row's top keys (``o3viz.run.sizing``, ``rows == "top_k"``; the mean rows were cut
    chunk by chunk, after the step allocation took their full rows), and per-head rows kept dense
    (a window shorter than k) as their top-k pairs."""
    att.rows_top_k = rows_top_k
    if att.per_head is not None:
        att.per_head_top, att.per_head = top_k_pairs(att.per_head, top_k), None
    att.info["top_k"] = top_k


def _token_scores(model, hidden, h0: int, seq, t0: int, t1: int, g0: int, stats: dict) -> None:
    """The local model's logprob, entropy (nats) and top-k for window tokens ``t0 .. t1`` (global
    text tokens ``g0 ..``), whose prediction comes from the hidden state one position earlier
    (``token_stats_rows``, the capture loop's statistics); ``hidden`` starts at window position
    ``h0``; logits in blocks of rows."""
    head = model.get_output_embeddings()
    k = stats["top_ids"].shape[1]
    for s in range(t0, t1, LOGIT_ROWS):
        e, gs = min(t1, s + LOGIT_ROWS), g0 + s - t0
        res = token_stats_rows(head(hidden[s - 1 - h0 : e - 1 - h0]), seq[s:e], k)  # logits (b, V)
        ge = gs + e - s
        stats["logprob"][gs:ge], stats["entropy"][gs:ge] = (
            res.logprob.cpu().numpy(),
            res.entropy.cpu().numpy(),
        )
        stats["top_ids"][gs:ge], stats["top_p"][gs:ge] = res.top_ids.cpu().numpy(), res.top_p.cpu().numpy()


def _fill_round(rnd, layout, offsets) -> None:
    """The prompt, its segments and each step's token range (known before the forward)."""
    rnd.rendered_prompt, rnd.prompt_tokens, rnd.segments = layout.rendered, layout.tokens, layout.segments
    for st, (a, b) in zip(
        rnd.steps, token_ranges([(st.start, st.end) for st in rnd.steps], offsets), strict=True
    ):
        st.token_start, st.token_end = a, b


def _fill_tokens(rnd, ids, offsets, stats: dict, tokenizer) -> None:
    piece = {i: tokenizer.decode([i]) for i in {int(i) for i in stats["top_ids"].ravel()}}
    rnd.tokens = [
        Token(
            int(t),
            rnd.text[s:e],
            s,
            e,
            _finite(stats["logprob"][i]),
            _finite(stats["entropy"][i]),
            [
                Alt(int(a), piece[int(a)], float(pr))
                for a, pr in zip(stats["top_ids"][i], stats["top_p"][i], strict=True)
            ],
        )
        for i, (t, (s, e)) in enumerate(zip(ids, offsets, strict=True))
    ]


def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(float(x)) else None


def _attention_record(out: EnrichRows, p, n_layers, n_heads, windows, model) -> AttentionRecord:
    alloc = out.alloc.alloc.astype(np.float16)
    info_model = getattr(model, "o3viz_info", None)
    info = {
        "method": "teacher-forced (forced decoding of the imported text, no sampling)",
        "attn_implementation": ATTN_NAME,
        "model_id": getattr(info_model, "model_id", None) or getattr(model.config, "_name_or_path", ""),
        "revision": getattr(info_model, "revision", None),
        "row_query": "row g is the attention of imported token g (query position P+g in its window)",
        "windows": [w.to_dict() for w in windows],
        "positions": "window-local: each window restarts text positions right after the prompt",
        "tokens": "logprob/entropy/top are the local model's predictions of the imported tokens",
    }
    return AttentionRecord(
        n_layers,
        n_heads,
        p,
        out.mean_rows(),
        list(out.keep),
        out.per_head,
        out.layer_head,
        None,
        alloc,
        out.alloc.labels,
        info=info,
        per_head_top=out.per_head_top,
    )
