"""``capture``: one instrumented generation run, ``RunRequest`` (or a prompt) in, ``Trace`` out.

It renders the prompt (chat template; for a compressed run, the compressed context), generates
token by token in the one loop (``o3viz.run.loop``) with the o3viz attention function installed
(``o3viz.hooks.instrument``) and the hooks the request asks for: the attention rows
``CaptureConfig`` keeps, Dynamic Attention Allocation (``DAAConfig``), KV-cache release
(``CompressionConfig``), routing and the logit lens. It records per-token logprob / entropy /
top-5, finds decision points, optionally explores alternative branches, splits the text into
steps and computes the step-level allocation.

Storage defaults (``CaptureConfig()``): the all-layer mean rows, the layer × head prompt shares,
per-head rows of three layers (first, middle, last) cut to the top 64 keys per head, and the
head-averaged prefill of those layers. Measured: a 512-token run of the default model on a
359-token prompt saves to 4.2 MB as ``.o3trace.json.gz`` (1.3 MB of it without per-head rows).
Full per-head rows of any layers: ``CaptureConfig(layers=[...], top_k=None)`` (about 8 MB raw
per layer for that run, so pick one or two).

At long lengths the storage plan (``o3viz.run.sizing``) decides, before the model generates, what
fits in a trace: above 2k prompt tokens the prefill keeps each row's top 64 keys
(``attention.info["prefill_top_k"]``) instead of the (P, P) map; above 2k new tokens each generated
token's mean and per-head rows keep their top 64 keys (``AttentionRecord.rows_top_k``,
``per_head_top``; the step allocation is computed from the full rows first); larger runs step down
further or are refused in one line. What it changed is said in ``attention.info["storage"]["note"]``.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

import numpy as np

from o3viz.compress.release import ReleaseHook
from o3viz.errors import UsageError
from o3viz.hooks.instrument import Recorder, RecorderSpec, instrument
from o3viz.moefy import MoefySetting, moefied
from o3viz.run.allocation import step_allocation
from o3viz.run.assemble import (
    answer_confidence,
    attention_record,
    build_steps,
    decision_points,
    dense_rows,
    generated_tokens,
)
from o3viz.run.compressed import CompressedPrompt, compress_prompt
from o3viz.run.config import CaptureConfig, DAAConfig, resolve_layers
from o3viz.run.daa.modes import DAA_MODE_TABLE
from o3viz.run.daa.relevance import DAATrack
from o3viz.run.daa.steer import SteerTrack
from o3viz.run.explore import explore_branches
from o3viz.run.layer_recorders import record_internals
from o3viz.run.loop import OnToken, Streamer, eos_ids, run_loop
from o3viz.run.prompt import PromptLayout, layout_prompt
from o3viz.run.provenance import run_provenance
from o3viz.run.request import RunRequest, build_request
from o3viz.run.sizing import plan_request
from o3viz.tasks.kind import detect_task_type
from o3viz.text.answers import round_answer
from o3viz.trace.attention import PairRows, top_k_pairs
from o3viz.trace.codec import encode_array
from o3viz.trace.core import TASK_KINDS, Round, Task, Trace, timestamp
from o3viz.verify.trace_checks import claim_checks

__all__ = ["CaptureConfig", "DAAConfig", "RunRequest", "capture", "resolve_layers"]


def _resolve_task(task: Task | str | None, prompt: str) -> Task:
    if isinstance(task, Task):
        return task
    if task is None:
        return Task(prompt, detect_task_type(prompt))
    if task not in TASK_KINDS:
        raise UsageError(f"task must be a Task or one of {', '.join(TASK_KINDS)}, not {task!r}")
    return Task(prompt, task)


def _prompt_and_task(req: RunRequest, task: Task | str | None) -> tuple[str, Task]:
    """The prompt to generate from and its task: ``req.prompt``, or the built-in ``req.task_id``."""
    if req.prompt is None and req.task_id:
        from o3viz.tasks.spec import load_task

        spec = load_task(req.task_id)
        return spec.prompt, task if isinstance(task, Task) else spec.task
    return req.prompt or "", _resolve_task(task, req.prompt or "")


def _recorder(model, layout: PromptLayout, req: RunRequest) -> Recorder:
    """The run's recorder, keeping what ``plan_request`` chose for this length (it refuses, in one
    line, a run whose trace could not fit before any token is generated)."""
    c, cfg = model.config, req.capture
    plan = plan_request(req, len(layout.ids), c.num_hidden_layers, c.num_attention_heads)
    keep = plan.layers if plan else []
    heads = None if cfg.heads is None else sorted({int(h) for h in cfg.heads})
    if heads is not None and any(not 0 <= h < c.num_attention_heads for h in heads):
        raise UsageError(f"heads must lie in 0..{c.num_attention_heads - 1}, got {heads}")
    import torch

    spec = RecorderSpec(
        c.num_hidden_layers,
        c.num_attention_heads,
        len(layout.ids),
        keep,
        heads,
        plan.head_average if plan else cfg.head_average,
        plan.top_k if plan else cfg.top_k,
        plan is not None and plan.prefill != "none",
        getattr(torch, cfg.dtype),
        keep_steps=cfg.enabled,  # without attention capture only release reads the rows
        prefill_top_k=plan.prefill_top_k if plan else None,
        sparse_rows=plan is not None and plan.rows == "top_k",
    )
    rec = Recorder(spec)
    rec.storage = plan.to_dict() if plan else None
    return rec


@dataclass
class _Hooks:
    """The loop hooks of one capture, in the order they run."""

    rec: Recorder
    instrumented: bool  # the o3viz attention function is installed (recording or biasing)
    track: DAATrack | None
    steer: SteerTrack | None
    release: ReleaseHook | None
    streamer: Streamer | None

    def loop(self) -> list:
        both = (self.rec if self.instrumented else None, self.track, self.release, self.streamer)
        return [h for h in both if h is not None]  # the recorder first: release reads its rows


def _hooks(model, tokenizer, req: RunRequest, layout: PromptLayout, packed, kind: str, on_token) -> _Hooks:
    rec = _recorder(model, layout, req)
    rec.record = req.capture.enabled or packed is not None
    daa = DAA_MODE_TABLE[req.daa.mode]
    instrumented = rec.record or daa.biases
    track = DAATrack(model, layout, req.daa, kind, rec if instrumented else None) if daa.relevance else None
    steer = None
    if daa.steers:
        length = (
            len(layout.ids) + req.max_new_tokens + req.capture.branch_tokens + 1
        )  # every position the run reaches
        steer = SteerTrack(model, tokenizer, layout, req.daa, rec, length)
    return _Hooks(
        rec,
        instrumented,
        track,
        steer,
        packed.hook(model, rec) if packed else None,
        Streamer(tokenizer, on_token, req.max_new_tokens) if on_token else None,
    )


def capture(
    model,
    tokenizer,
    request: RunRequest | str,
    *,
    task: Task | str | None = None,
    on_token: OnToken | None = None,
    should_stop: Callable[[], bool] | None = None,
    **settings: Any,
) -> Trace:
    """Generate with instrumentation and return the run's ``Trace`` (one round).

    ``request`` carries every setting (a plain string is ``RunRequest(prompt=...)``); keyword
    settings (``max_new_tokens=8``, ``daa="observe"``, any ``RunRequest`` field) are laid over it.
    ``task`` is the prompt's task or its kind (default: detected). ``on_token(index, text_piece,
    total)`` streams progress; ``should_stop()`` is polled after every token (the app's Stop button).
    """
    req = build_request(request, **settings)
    req.validate()
    created = timestamp()
    prompt, task = _prompt_and_task(req, task)
    cfg = req.capture
    packed = compress_prompt(tokenizer, prompt, req.compression) if req.compression else None
    if packed is not None and req.prefix:
        raise UsageError("a branch (a reply prefix) cannot be continued with compression on")
    layout = packed.layout if packed else layout_prompt(tokenizer, prompt, req.prefix)
    h = _hooks(model, tokenizer, req, layout, packed, task.kind, on_token)
    stop_ids = eos_ids(model, tokenizer)
    with (
        moefied(model, tokenizer, MoefySetting(*cfg.moefy)) if cfg.moefy else nullcontext(None) as moefy_info,
        instrument(model, h.rec) if h.instrumented else nullcontext(),
    ):
        with record_internals(model, tokenizer, cfg, {"moefy": moefy_info} if moefy_info else None) as inner:
            hooks = [*h.loop(), inner]
            gen = run_loop(model, layout.ids, req, stop_ids=stop_ids, hooks=hooks, should_stop=should_stop)
        rnd = build_round(tokenizer, layout, gen, task, cfg)
        if req.prefix:
            rnd.info["reply_prefix_chars"] = len(req.prefix)
        rnd.internals = inner.finish(len(gen.ids))
        if req.explore:
            rnd.branches = explore_branches(
                model, tokenizer, layout.ids, gen.ids, rnd.decision_points, req, stop_ids=stop_ids,
                kind=task.kind, recorder=h.rec if h.instrumented else None, track=h.track,
            )  # fmt: skip
    trace = Trace(task, [rnd], run_provenance(model, req, h.instrumented, created))
    if packed is not None:
        _compressed_round(rnd, packed, prompt)
        trace.compression = h.release.result(gen, tokenizer).to_record(packed.ctx)
    rnd.attention = _attention(h.rec, rnd, layout, cfg, h.track) if cfg.enabled else None
    if h.steer is not None:
        _steer_record(h.steer, h.rec, rnd, cfg)
    return trace


def _steer_record(steer: SteerTrack, rec: Recorder, rnd: Round, cfg: CaptureConfig) -> None:
    """The steering record: on the attention record with the unsteered rows, or (attention not
    captured) its settings and spans in the round's info."""
    if rnd.attention is None:
        rnd.info["steer"] = steer.record(None).to_dict()
        return
    before = None
    if rec.steps_before:
        before = dense_rows(
            rec.steps_before[: rnd.attention.num_generated], rnd.attention.mean.shape[1], np.dtype(cfg.dtype)
        )
    rnd.attention.steer = steer.record(before)


def _compressed_round(rnd: Round, packed: CompressedPrompt, prompt: str) -> None:
    """A compressed run's round: the prompt as given, the context segments as prompt segments."""
    rnd.prompt = prompt
    rnd.segments = packed.segments()
    rnd.info["compressed_prompt"] = True


def build_round(tokenizer, layout: PromptLayout, gen, task: Task, cfg: CaptureConfig) -> Round:
    text, tokens = generated_tokens(tokenizer, gen.ids, gen.logprobs, gen.entropies, gen.tops)
    found = round_answer(text, task.kind)
    answer = found.text if found else None
    span = (found.start, found.end) if found else None
    steps, rules = build_steps(text, tokens, span[0] if span else None)
    rnd = Round(
        index=0,
        prompt=layout.prompt,
        rendered_prompt=layout.rendered,
        prompt_tokens=layout.tokens,
        segments=layout.segments,
        text=text,
        tokens=tokens,
        steps=steps,
        decision_points=decision_points(tokens, cfg.entropy_threshold, cfg.margin_threshold),
        answer=answer,
        confidence=answer_confidence(tokens, span) if span else None,
        info={
            "prompt_tokens": len(layout.ids),
            "generated_tokens": len(gen.ids),
            "stop_reason": gen.reason,
            "branch_rules": rules,
        },
    )
    rnd.checks, rnd.info["claim_checker"] = claim_checks(rnd)  # every run's text gets its claims checked
    return rnd


def _attention(rec: Recorder, rnd: Round, layout: PromptLayout, cfg: CaptureConfig, track: DAATrack | None):
    dtype, head_average = np.dtype(cfg.dtype), rec.spec.head_average  # the plan may have chosen the mean
    att = attention_record(rec, len(rnd.tokens), dtype, rec.spec.keep_heads, head_average)
    att.heads = (
        [] if head_average else (list(rec.spec.keep_heads) if rec.spec.keep_heads is not None else None)
    )
    _kept_at_length(att, rec)
    if rnd.steps:
        # (step_allocation converts one step's rows at a time: no (G, C) float32 copy of the rows)
        alloc, labels = step_allocation(att.mean, len(layout.ids), rnd.segments, rnd.steps)
        att.step_alloc, att.alloc_labels = alloc.astype(dtype), labels
    storage = rec.storage or {}
    if storage.get("rows") == "top_k" and att.num_generated:  # after the allocation, from the full rows
        att.rows_top_k = int(storage["rows_top_k"])
        att.mean = PairRows(*top_k_pairs(att.mean, att.rows_top_k), att.mean.shape[1])  # held as pairs
    if track is not None:
        before = None
        if rec.steps_before:
            before = dense_rows(rec.steps_before[: att.num_generated], att.mean.shape[1], dtype)
        att.daa = track.record(before)
    return att


def _kept_at_length(att, rec: Recorder) -> None:
    """Record what the storage plan kept (``info["storage"]``, with its sentence) and the top-k
    prefill rows (``info["prefill_top_k"]``: (len(layers), P, k) values and int32 key indices)."""
    if rec.storage is not None:
        att.info["storage"] = rec.storage
    if rec.prefill_top and all(layer in rec.prefill_top for layer in rec.spec.keep_layers):
        layers = rec.spec.keep_layers
        att.info["prefill_top_k"] = {
            "k": int(rec.prefill_top[layers[0]][0].shape[1]),
            "layers": list(layers),
            "values": encode_array(np.stack([rec.prefill_top[layer][0].numpy() for layer in layers])),
            "index": encode_array(np.stack([rec.prefill_top[layer][1].numpy() for layer in layers])),
        }
