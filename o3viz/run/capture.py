"""``capture``: one instrumented generation run, prompt in, ``Trace`` out.

It renders the prompt (chat template), generates token by token with the o3viz attention
function installed (``o3viz.hooks.instrument``), records per-token logprob / entropy / top-5 and the
attention rows ``CaptureConfig`` keeps, applies Dynamic Attention Allocation (``DAAConfig``),
finds decision points, optionally explores alternative branches, splits the text into steps and
computes the step-level allocation.

Storage defaults (``CaptureConfig()``): the all-layer mean rows, the layer × head prompt shares,
per-head rows of three layers (first, middle, last) cut to the top 64 keys per head, and the
head-averaged prefill of those layers. Measured: a 512-token run of the default model on a
359-token prompt saves to 4.2 MB as ``.o3trace.json.gz`` (1.3 MB of it without per-head rows).
Full per-head rows of any layers: ``CaptureConfig(layers=[...], top_k=None)`` (about 8 MB raw
per layer for that run, so pick one or two).
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
from collections.abc import Callable
from contextlib import nullcontext
from typing import Protocol

import numpy as np

from o3viz.errors import UsageError
from o3viz.hooks.instrument import ATTN_NAME, Recorder, RecorderSpec, instrument
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
from o3viz.run.config import CaptureConfig, DAAConfig, resolve_layers
from o3viz.run.daa import DAATrack
from o3viz.run.explore import explore_branches
from o3viz.run.internals import record_internals
from o3viz.run.loop import eos_ids, run_loop
from o3viz.run.prompt import PromptLayout, layout_prompt
from o3viz.run.request import RunRequest
from o3viz.tasks.kind import detect_task_type
from o3viz.text.answers import round_answer
from o3viz.trace.core import TASK_KINDS, Provenance, Round, Task, Trace, timestamp
from o3viz.verify.trace_checks import claim_checks

__all__ = ["CaptureConfig", "DAAConfig", "capture", "resolve_layers"]


class OnToken(Protocol):
    def __call__(self, index: int, text_piece: str, total: int) -> None: ...


def _resolve_task(task: Task | str | None, prompt: str) -> Task:
    if isinstance(task, Task):
        return task
    if task is None:
        return Task(prompt, detect_task_type(prompt))
    if task not in TASK_KINDS:
        raise UsageError(f"task must be a Task or one of {', '.join(TASK_KINDS)}, not {task!r}")
    return Task(prompt, task)


class _Streamer:
    """Incremental detokenisation for ``on_token`` (holds back pieces that end mid-character)."""

    def __init__(self, tokenizer, callback: OnToken, total: int):
        self.tok, self.callback, self.total = tokenizer, callback, total
        self.ids: list[int] = []
        self.prefix, self.read = 0, 0

    def __call__(self, index: int, token_id: int) -> None:
        self.ids.append(token_id)
        head = self.tok.decode(self.ids[self.prefix : self.read], skip_special_tokens=True)
        new = self.tok.decode(self.ids[self.prefix :], skip_special_tokens=True)
        piece = ""
        if len(new) > len(head) and not new.endswith("\ufffd"):
            piece = new[len(head) :]
            self.prefix, self.read = self.read, len(self.ids)
        self.callback(index, piece, self.total)


def _versions() -> dict:
    out = {}
    for name in ("torch", "transformers", "o3viz"):
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "unknown"
    return out


def _provenance(model, settings: dict, seed: int, instrumented: bool, created: str) -> Provenance:
    info = getattr(model, "o3viz_info", None)
    impl = model.config._attn_implementation
    return Provenance(
        model_id=getattr(info, "model_id", None) or str(getattr(model, "name_or_path", "") or ""),
        revision=getattr(info, "revision", None),
        dtype=str(model.dtype).replace("torch.", ""),
        attn_implementation=f"{ATTN_NAME} (fp32 rows at decode, sdpa output at prefill)"
        if instrumented
        else impl,
        device=str(model.device),
        library_versions=_versions(),
        settings=settings,
        seed=seed,
        created_at=created,
        finished_at=timestamp(),
    )


def _recorder(model, layout: PromptLayout, cfg: CaptureConfig) -> Recorder:
    c = model.config
    keep = resolve_layers(cfg.layers, c.num_hidden_layers)
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
        cfg.head_average,
        cfg.top_k,
        cfg.prefill,
        getattr(torch, cfg.dtype),
    )
    rec = Recorder(spec)
    rec.record = cfg.enabled
    return rec


def _settings(cfg: CaptureConfig, daa: DAAConfig, **kw) -> dict:
    d = {"capture": dataclasses.asdict(cfg), "daa": dataclasses.asdict(daa), **kw}
    for part in ("capture", "daa"):
        for k, v in d[part].items():
            if isinstance(v, tuple | range) or hasattr(v, "tolist"):
                d[part][k] = list(v.tolist() if hasattr(v, "tolist") else v)
    return d


def capture(
    model,
    tokenizer,
    prompt: str,
    *,
    max_new_tokens: int = 256,
    capture: CaptureConfig | None = None,
    daa: DAAConfig | None = None,
    explore: int = 0,
    seed: int = 0,
    do_sample: bool = False,
    temperature: float = 1.0,
    task: Task | str | None = None,
    on_token: OnToken | None = None,
    should_stop: Callable[[], bool] | None = None,
    min_new_tokens: int = 0,
) -> Trace:
    """Generate from ``prompt`` with instrumentation and return the run's ``Trace`` (one round).

    Greedy unless ``do_sample`` (seeded by ``seed``). ``on_token(index, text_piece, total)``
    streams progress; ``should_stop()`` is polled after every token (the app's Stop button).
    ``min_new_tokens`` suppresses EOS that long (benchmarks use it for equal-length runs).
    """
    cfg, daa = capture or CaptureConfig(), daa or DAAConfig()
    RunRequest(
        prompt=prompt,
        max_new_tokens=max_new_tokens,
        min_new_tokens=min_new_tokens,
        capture=cfg,
        daa=daa,
        explore=explore,
        temperature=temperature,
    ).validate()
    created = timestamp()
    task = _resolve_task(task, prompt)
    layout = layout_prompt(tokenizer, prompt)
    rec = _recorder(model, layout, cfg)
    instrumented = cfg.enabled or daa.mode == "allocate"
    track = (
        DAATrack(model, layout, daa, task.kind, rec if instrumented else None) if daa.mode != "off" else None
    )
    stop_ids = eos_ids(model, tokenizer)
    streamer = _Streamer(tokenizer, on_token, max_new_tokens) if on_token else None
    with (
        moefied(model, tokenizer, MoefySetting(*cfg.moefy)) if cfg.moefy else nullcontext(None) as moefy_info,
        instrument(model, rec) if instrumented else nullcontext(),
    ):
        with record_internals(
            model, tokenizer, cfg, {"moefy": moefy_info} if moefy_info else None
        ) as internals:
            gen = run_loop(
                model,
                layout.ids,
                max_new_tokens=max_new_tokens,
                stop_ids=stop_ids,
                min_new_tokens=min_new_tokens,
                do_sample=do_sample,
                temperature=temperature,
                seed=seed,
                before_forward=track.append if track else None,
                after_forward=rec.end_step if instrumented else None,
                on_token=streamer,
                should_stop=should_stop,
            )
        rnd = _build_round(tokenizer, layout, gen, task, cfg)
        rnd.internals = internals.finish(len(gen.ids))
        if explore:
            rnd.branches = explore_branches(
                model,
                tokenizer,
                layout.ids,
                gen.ids,
                rnd.decision_points,
                explore,
                max_tokens=cfg.branch_tokens,
                stop_ids=stop_ids,
                kind=task.kind,
                recorder=rec if instrumented else None,
                track=track,
            )
    rnd.attention = _attention(rec, rnd, layout, cfg, track) if cfg.enabled else None
    settings = _settings(
        cfg,
        daa,
        max_new_tokens=max_new_tokens,
        min_new_tokens=min_new_tokens,
        explore=explore,
        do_sample=do_sample,
        temperature=temperature,
    )
    return Trace(task, [rnd], _provenance(model, settings, seed, instrumented, created))


def _build_round(tokenizer, layout: PromptLayout, gen, task: Task, cfg: CaptureConfig) -> Round:
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
    dtype = np.dtype(cfg.dtype)
    att = attention_record(rec, len(rnd.tokens), dtype, rec.spec.keep_heads, cfg.head_average)
    att.heads = (
        [] if cfg.head_average else (list(rec.spec.keep_heads) if rec.spec.keep_heads is not None else None)
    )
    if rnd.steps:
        alloc, labels = step_allocation(att.mean.astype(np.float32), len(layout.ids), rnd.segments, rnd.steps)
        att.step_alloc, att.alloc_labels = alloc.astype(dtype), labels
    if track is not None:
        before = None
        if rec.steps_before:
            before = dense_rows(rec.steps_before[: att.num_generated], att.mean.shape[1], dtype)
        att.daa = track.record(before)
    return att
