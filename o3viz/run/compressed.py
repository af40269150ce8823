"""Compressed runs (``RunRequest.compression``, ``python -m o3viz run --compress``): pattern
recognition before the model (pointers for repeated segments, ``o3viz.compress.context``), then
generation with progressive release from the KV cache (``o3viz.compress.release.ReleaseHook``),
in the one generation loop, so a compressed run records attention, DAA, routing and the lens,
explores branches, streams, stops and loops like any run.

``compress_prompt`` prepares the prompt side (what ``capture`` calls for a compressed run);
``generate_with_release`` is the token-level form (ids and segment ranges in, ``ReleaseResult``
out). ``o3viz.run.dispatch.run_compressed`` is a whole run with compression on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from o3viz.compress.context import CompressedContext, CompressionConfig, compress_context
from o3viz.compress.release import ReleaseHook, ReleaseResult, segment_token_ranges
from o3viz.hooks.instrument import instrument
from o3viz.hooks.recorder import Recorder, RecorderSpec
from o3viz.run.loop import OnToken, eos_ids, run_loop
from o3viz.run.prompt import PromptLayout, layout_prompt
from o3viz.run.request import RunRequest
from o3viz.trace import Segment


@dataclass
class CompressedPrompt:
    """A prompt compressed before the model: the context, the layout the model reads, and each
    context segment's token range in it."""

    ctx: CompressedContext
    layout: PromptLayout
    ranges: list[tuple[int, int]]

    def hook(self, model, recorder: Recorder) -> ReleaseHook:
        redundancy = [s.redundancy for s in self.ctx.segments]
        return ReleaseHook(model, recorder, self.layout.ids, self.ranges, self.ctx.config, redundancy)

    def segments(self) -> list[Segment]:
        """The round's prompt segments: one per context segment (the compression record's index),
        where segments a range pointer covers together give their tokens to the first."""
        at = self.layout.rendered.find(self.ctx.text)
        out, end = [], 0
        for s, (a, b) in zip(self.ctx.segments, self.ranges, strict=True):
            a = min(max(a, end), max(b, end))
            b = max(b, a)
            start = min(at + s.cstart, len(self.layout.rendered))
            out.append(Segment(s.index, start, max(start, at + s.cend), a, b, f"{s.state} {s.index}"))
            end = b
        return out


def _question_of(prompt: str) -> str | None:
    """The demand for the pre-model scores: the prompt's last paragraph (where the question sits)."""
    tail = prompt.strip().rsplit("\n\n", 1)[-1].strip()
    return tail or None


def compress_prompt(tokenizer, prompt: str, config: CompressionConfig) -> CompressedPrompt:
    """Compress ``prompt`` and lay out what the model reads (chat template applied)."""
    ctx = compress_context(prompt, tokenizer=tokenizer, config=config, question=_question_of(prompt))
    layout = layout_prompt(tokenizer, ctx.text)
    return CompressedPrompt(ctx, layout, segment_token_ranges(ctx, layout.rendered, layout.offsets))


def generate_with_release(
    model,
    tokenizer,
    input_ids,
    segments: Sequence[Any],
    req: RunRequest | None = None,
    *,
    config: CompressionConfig | None = None,
    redundancy: Sequence[float] | None = None,
    on_token: OnToken | None = None,
) -> ReleaseResult:
    """Generate after ``input_ids`` ((n,) or (1, n)) with ``req``'s decoding settings (default:
    greedy, 64 tokens) and progressive release of ``segments`` (token ranges into ``input_ids``),
    recording only what release needs."""
    import torch

    from o3viz.run.loop import Streamer

    req = req or RunRequest(max_new_tokens=64)
    ids = torch.as_tensor(input_ids, dtype=torch.long).flatten().tolist()
    c = model.config
    rec = Recorder(
        RecorderSpec(c.num_hidden_layers, c.num_attention_heads, len(ids), prefill=False, keep_steps=False)
    )
    release = ReleaseHook(model, rec, ids, segments, config or req.compression, redundancy)
    hooks = [rec, release] + ([Streamer(tokenizer, on_token, req.max_new_tokens)] if on_token else [])
    with instrument(model, rec):
        gen = run_loop(model, ids, req, stop_ids=eos_ids(model, tokenizer), hooks=hooks)
    return release.result(gen, tokenizer)
