"""A capture-shaped synthetic trace at long lengths (tests and the long-capture benchmark): a
prompt of ``prompt_tokens`` tokens, a short generation, and attention kept the way a long capture
keeps it (the mean rows, per-head rows as top-k (value, key) pairs, the storage plan's sentence).
Built in about a second at 32k tokens, without a model; provenance says ``synthetic``.

>>> t = long_capture_trace(2048, steps=4)
>>> t.final.attention.prompt_len, t.final.attention.per_head_top[1].shape[-1]
(2048, 64)
"""

from __future__ import annotations

import numpy as np

from o3viz.run.allocation import step_allocation
from o3viz.run.sizing import plan_storage
from o3viz.testing.synthetic import _attention_rows, make_trace
from o3viz.trace import Segment, Token, Trace

TOP_K = 64


def _long_prompt(n: int) -> tuple[str, list[Token], list[Segment]]:
    """A rendered chat prompt of exactly ``n`` whitespace tokens: numbered facts and a question."""
    head = ["<|im_start|>system\n", "You", " solve.<|im_end|>\n<|im_start|>user\n"]
    tail = [" How", " many", " apples", " in", " crate", " 3?", "<|im_end|>\n"]
    body = [
        f" fact{i % 97}:{(i * 37) % 101}" if i % 2 else "\nFact" for i in range(n - len(head) - len(tail))
    ]
    pieces = head + body + tail
    toks, pos = [], 0
    for k, piece in enumerate(pieces):
        toks.append(Token(k, piece, pos, pos + len(piece)))
        pos += len(piece)
    cut = [0, 3, n - len(tail), n]
    labels = ["system", "question", "question end"]
    segs = [
        Segment(i, toks[a].start, toks[b - 1].end, a, b, labels[i])
        for i, (a, b) in enumerate(zip(cut, cut[1:], strict=False))
    ]
    return "".join(pieces), toks, segs


def long_capture_trace(prompt_tokens: int = 16384, *, steps: int = 12, seed: int = 0) -> Trace:
    """A trace shaped like a capture of a ``prompt_tokens``-token prompt with a short generation."""
    trace = make_trace(steps, seed=seed, compression=False, daa_mode="observe", layers=(0, 5))
    rnd = trace.final
    rendered, ptoks, segs = _long_prompt(prompt_tokens)
    rnd.rendered_prompt, rnd.prompt_tokens, rnd.segments = rendered, ptoks, segs
    rng = np.random.default_rng(seed)
    att = rnd.attention
    p, g = prompt_tokens, len(rnd.tokens)
    mean = _attention_rows(p, g, rng)
    idx = np.sort(np.argpartition(mean, mean.shape[1] - TOP_K, axis=1)[:, -TOP_K:], axis=1)  # (G, k)
    heads = (len(att.layers), att.num_heads)
    vals = np.take_along_axis(mean, idx, axis=1).astype(np.float32)[:, None, None, :]
    vals = vals * rng.gamma(2.0, 0.5, size=(g, *heads, TOP_K)).astype(np.float32)
    att.prompt_len, att.mean, att.per_head = p, mean, None
    att.per_head_top = (
        vals.astype(np.float16),
        np.broadcast_to(idx[:, None, None, :], vals.shape).astype(np.int32),
    )
    share = mean[:, :p].astype(np.float32).sum(axis=1)
    att.layer_head = np.clip(share[:, None, None] * rng.gamma(4.0, 0.25, (1, att.num_layers, att.num_heads)), 0, 1).astype(np.float16)  # fmt: skip
    alloc, att.alloc_labels = step_allocation(mean, p, segs, rnd.steps)
    att.step_alloc = alloc.astype(np.float16)
    if att.daa is not None:
        att.daa.relevance = rng.uniform(0.1, 0.9, p + g).astype(np.float16)
        att.daa.focus, att.daa.before = p - 2, None
    plan = plan_storage(p, g, num_layers=att.num_layers, num_heads=att.num_heads, layers=list(att.layers))
    att.info = {"synthetic": True, "top_k": TOP_K, "storage": plan.to_dict()}
    rnd.info["prompt_tokens"] = p
    trace.task.question = "How many apples in crate 3?"
    return trace
