"""Enrichment: teacher-forcing an imported trace through a local model to give it tokens (with the
local model's logprob, entropy and top-5 alternatives) and attention.

The question is rendered with the model's chat template (``o3viz.run.prompt.layout_prompt``,
the same layout a local ``capture`` uses, so the two can be compared), the imported
``round.text`` follows it, and the whole sequence goes through the model without sampling.

Windows: the model sees at most ``window`` tokens (default: its context length). When the prompt
plus the text is longer, the text goes through overlapping windows: every window holds the full
prompt and a span of the text, consecutive spans share ``overlap`` tokens, and each text token's
attention row is taken from the window in which it has the most earlier text in view (the first
window for the opening tokens; later windows skip their first ``overlap`` tokens). Positions are
window-local. Keys outside a row's window are zero in ``mean``. ``attention.info["windows"]``
lists each window's text-token span and the rows it supplied.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from o3viz.errors import UsageError
from o3viz.hooks.blockwise import ATTN_NAME, WindowRecorder, recording
from o3viz.run.allocation import step_allocation
from o3viz.run.loop import token_stats_rows
from o3viz.run.sizing import plan_storage
from o3viz.text.spans import token_ranges
from o3viz.trace import Alt, AttentionRecord, Token, Trace
from o3viz.trace.attention import scatter_pairs, top_k_pairs

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
) -> Trace:
    """Fill ``trace.final`` with prompt tokens, tokens, step token ranges and ``attention``.

    ``model``/``tokenizer`` default to ``o3viz.model.load_model()``; ``model`` may also be a name or
    path for ``load_model``. ``layers`` are the layers whose per-head rows are kept ("auto", "all",
    "none" or indices).
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
    window = window or int(getattr(cfg, "max_position_embeddings", 8192))
    if p > window // 2:
        raise UsageError(f"the question is {p} tokens; enrichment needs it under half the window ({window})")
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
    arrays = _run_windows(model, layout.ids, ids, windows, keep, n_layers, n_heads, top_k, head_k)
    _fill_round(rnd, layout, ids, offsets, arrays, tokenizer)
    rnd.attention = _attention_record(rnd, arrays, p, keep, n_layers, n_heads, windows, model)
    if plan.rows == "top_k":  # a long text: rows as top-k pairs, as a long capture keeps them
        if arrays["per_head_top"] is not None:
            rnd.attention.per_head_top = arrays["per_head_top"]
        _sparse_rows(rnd.attention, plan.rows_top_k, plan.top_k)
    rnd.attention.info["storage"] = plan.to_dict()
    trace.info["enrichment"] = dict(rnd.attention.info)
    return trace


def _run_windows(model, prompt_ids, ids, windows, keep, n_layers, n_heads, top_k, head_k=None) -> dict:
    """Forward every window; returns global (G, C) fp16 ``mean``, (G, L, H) ``layer_head``,
    optional (G, len(keep), H, C) ``per_head`` (with ``head_k``: ``per_head_top``, (G, len(keep), H, k)
    values and int32 global key positions), and per-token logprob / entropy / top-k."""
    p, g = len(prompt_ids), len(ids)
    c = p + g
    mean = np.zeros((g, c), dtype=np.float16)
    layer_head = np.zeros((g, n_layers, n_heads), dtype=np.float16)
    per_head = np.zeros((g, len(keep), n_heads, c), dtype=np.float16) if keep and head_k is None else None
    head_top = None
    if keep and head_k is not None:
        shape = (g, len(keep), n_heads, head_k)
        head_top = (np.zeros(shape, np.float16), np.zeros(shape, np.int32))
    lp, ent = np.zeros(g, np.float32), np.zeros(g, np.float32)
    top_ids, top_p = np.zeros((g, top_k), np.int64), np.zeros((g, top_k), np.float32)
    device = next(model.parameters()).device
    for w in windows:
        seq = torch.tensor([list(prompt_ids) + list(ids[w.start : w.end])], device=device)
        rows = (p + w.row_start - w.start, p + w.end - w.start)  # window query positions kept
        rec = WindowRecorder(*rows, seq.shape[1], p, n_layers, n_heads, keep, head_k)
        with torch.inference_mode():
            with recording(model, rec):
                hidden = model.get_decoder()(input_ids=seq).last_hidden_state[0]  # (T, d)
            _token_scores(model, hidden, seq[0], rows, w.row_start, lp, ent, top_ids, top_p)
        del hidden
        # window key k -> global column: prompt keys stay, text key p+j -> p+w.start+j (slices: no temporaries)
        r0, r1, acc = w.row_start, w.end, rec.acc.div_(n_layers * n_heads).numpy()
        mean[r0:r1, :p], mean[r0:r1, p + w.start : p + w.end] = acc[:, :p], acc[:, p:]
        layer_head[r0:r1] = rec.layer_head.numpy()
        for i, layer in enumerate(keep if rec.per_head_top else []):
            vals, idx = (t.numpy() for t in rec.per_head_top[layer])
            head_top[0][r0:r1, i] = vals
            head_top[1][r0:r1, i] = np.where(idx < p, idx, idx + w.start)  # window key -> global column
        for i, layer in enumerate(keep if rec.per_head else []):
            block = rec.per_head[layer].numpy()
            per_head[r0:r1, i, :, :p], per_head[r0:r1, i, :, p + w.start : p + w.end] = (
                block[..., :p],
                block[..., p:],
            )
        del rec
    return {
        "mean": mean,
        "layer_head": layer_head,
        "per_head": per_head,
        "per_head_top": head_top,
        "logprob": lp,
        "entropy": ent,
        "top_ids": top_ids,
        "top_p": top_p,
    }


def _sparse_rows(att: AttentionRecord, rows_top_k: int, top_k: int) -> None:
    """Keep each row's top keys (``o3viz.run.sizing``, ``rows == "top_k"``), after the step
    allocation was computed from the full rows."""
    att.rows_top_k = rows_top_k
    att.mean = scatter_pairs(*top_k_pairs(att.mean, rows_top_k), att.mean.shape[1])
    if att.per_head is not None:
        att.per_head_top, att.per_head = top_k_pairs(att.per_head, top_k), None
    att.info["top_k"] = top_k


def _token_scores(model, hidden, seq, rows, row_start, lp, ent, top_ids, top_p) -> None:
    """The local model's logprob, entropy (nats) and top-k for each kept text token, whose
    prediction comes from the hidden state one position earlier (``token_stats_rows``, the capture
    loop's statistics); logits in blocks of rows."""
    head = model.get_output_embeddings()
    k = top_ids.shape[1]
    for s in range(rows[0], rows[1], LOGIT_ROWS):
        e = min(rows[1], s + LOGIT_ROWS)
        g0 = row_start + (s - rows[0])
        stats = token_stats_rows(head(hidden[s - 1 : e - 1]), seq[s:e], k)  # logits (b, V)
        lp[g0 : g0 + e - s], ent[g0 : g0 + e - s] = stats.logprob.cpu().numpy(), stats.entropy.cpu().numpy()
        top_ids[g0 : g0 + e - s], top_p[g0 : g0 + e - s] = (
            stats.top_ids.cpu().numpy(),
            stats.top_p.cpu().numpy(),
        )


def _fill_round(rnd, layout, ids, offsets, arrays, tokenizer) -> None:
    rnd.rendered_prompt, rnd.prompt_tokens, rnd.segments = layout.rendered, layout.tokens, layout.segments
    piece = {i: tokenizer.decode([i]) for i in {int(i) for i in arrays["top_ids"].ravel()}}
    rnd.tokens = [
        Token(
            int(t),
            rnd.text[s:e],
            s,
            e,
            _finite(arrays["logprob"][i]),
            _finite(arrays["entropy"][i]),
            [
                Alt(int(a), piece[int(a)], float(pr))
                for a, pr in zip(arrays["top_ids"][i], arrays["top_p"][i], strict=True)
            ],
        )
        for i, (t, (s, e)) in enumerate(zip(ids, offsets, strict=True))
    ]
    for st, (a, b) in zip(
        rnd.steps, token_ranges([(st.start, st.end) for st in rnd.steps], offsets), strict=True
    ):
        st.token_start, st.token_end = a, b


def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(float(x)) else None


def _attention_record(rnd, arrays, p, keep, n_layers, n_heads, windows, model) -> AttentionRecord:
    alloc, labels = step_allocation(arrays["mean"], p, rnd.segments, rnd.steps)
    alloc = alloc.astype(np.float16)
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
        arrays["mean"],
        list(keep),
        arrays["per_head"],
        arrays["layer_head"],
        None,
        alloc,
        labels,
        info=info,
    )
