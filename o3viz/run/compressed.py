"""A run on a compressed context (``python -m o3viz run --compress``): pattern recognition before
the model (pointers for repeated segments), then generation with progressive release from the
KV cache, all recorded in one trace with its compression map.

Attention here comes from the release loop's own eager decode steps (it needs each segment's
received attention to decide releases), so the round carries tokens, steps and the compression
record but no per-head attention rows; a plain ``capture`` of the same prompt gives those.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Any

import torch

from o3viz.compress.context import CompressionConfig, compress_context
from o3viz.compress.release import generate_with_release, segment_token_ranges
from o3viz.run.assemble import answer_span, build_steps, generated_tokens
from o3viz.run.capture import _provenance
from o3viz.run.prompt import render_chat, tokenize_with_offsets
from o3viz.trace import Round, Task, Token, Trace
from o3viz.trace.core import timestamp
from o3viz.verify.trace_checks import claim_checks


def _question_of(prompt: str) -> str | None:
    """The demand for the pre-model scores: the prompt's last paragraph (where the question sits)."""
    tail = prompt.strip().rsplit("\n\n", 1)[-1].strip()
    return tail or None


def run_compressed(
    model: Any,
    tokenizer: Any,
    prompt: str,
    *,
    config: CompressionConfig | None = None,
    max_new_tokens: int = 64,
    task: Task | None = None,
    on_token: Callable[[int, str, int], None] | None = None,
) -> Trace:
    """Compress ``prompt``, generate with release/restore, and return the trace."""
    config = config or CompressionConfig()
    created = timestamp()
    ctx = compress_context(prompt, tokenizer=tokenizer, config=config, question=_question_of(prompt))
    rendered, chat = render_chat(tokenizer, ctx.text)
    ids, offsets = tokenize_with_offsets(tokenizer, rendered, add_special=not chat)
    ranges = segment_token_ranges(ctx, rendered, offsets)

    def relay(step: int, token_id: int, piece: str) -> None:
        if on_token is not None:
            on_token(step, piece, max_new_tokens)

    res = generate_with_release(
        model,
        tokenizer,
        torch.tensor([ids]),
        ranges,
        config=config,
        max_new_tokens=max_new_tokens,
        on_token=relay,
        redundancy=[s.redundancy for s in ctx.segments],
    )
    text, tokens = generated_tokens(tokenizer, res.tokens, res.logprobs, res.entropies, res.top)
    rnd = Round(
        index=0,
        prompt=prompt,
        rendered_prompt=rendered,
        text=text,
        tokens=tokens,
        prompt_tokens=[Token(i, rendered[s:e], s, e) for i, (s, e) in zip(ids, offsets, strict=True)],
    )
    rnd.answer = (text.strip().splitlines() or [""])[-1] or None
    span = answer_span(text, rnd.answer)
    rnd.steps, rnd.info["branch_rules"] = build_steps(text, tokens, span[0] if span else None)
    rnd.info["compressed_prompt"] = True
    rnd.checks, rnd.info["claim_checker"] = claim_checks(rnd)
    settings = {"compression": asdict(config), "max_new_tokens": max_new_tokens}
    trace = Trace(task or Task(prompt), [rnd], _provenance(model, settings, 0, False, created))
    trace.compression = res.to_record(ctx)
    return trace
