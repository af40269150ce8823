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
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

from o3viz.errors import UsageError
from o3viz.hooks.daa import detect_task_type
from o3viz.hooks.instrument import ATTN_NAME, Recorder, RecorderSpec, instrument
from o3viz.moefy import MoefySetting, moefied
from o3viz.run.assemble import (
    ENTROPY_THRESHOLD,
    MARGIN_THRESHOLD,
    answer_confidence,
    attention_record,
    build_steps,
    decision_points,
    dense_rows,
    extract_answer,
    generated_tokens,
    step_allocation,
)
from o3viz.run.daa import DAAConfig, DAATrack
from o3viz.run.explore import explore_branches
from o3viz.run.internals import check_internals, record_internals
from o3viz.run.loop import eos_ids, run_loop
from o3viz.run.prompt import PromptLayout, layout_prompt
from o3viz.trace.core import TASK_KINDS, Provenance, Round, Task, Trace, timestamp

__all__ = ["CaptureConfig", "DAAConfig", "capture", "resolve_layers"]


class OnToken(Protocol):
    def __call__(self, index: int, text_piece: str, total: int) -> None: ...


@dataclass
class CaptureConfig:
    """What attention a run records and keeps (bounded storage)."""

    enabled: bool = True  # record attention at all (False: tokens and logprobs only)
    layers: str | Sequence[int] = (
        "auto"  # per-head rows: "auto" (first, middle, last), "all", "none", indices
    )
    heads: Sequence[int] | None = None  # heads kept in per-head rows (None: all)
    top_k: int | None = 64  # keep the k largest keys of each per-head row, zeros elsewhere (None: full rows)
    head_average: bool = False  # keep the head mean of the kept layers instead of per-head rows
    prefill: bool = True  # head-averaged prefill attention (P, P) of the kept layers
    dtype: Literal["float16", "float32"] = "float16"  # storage dtype of the arrays
    entropy_threshold: float = ENTROPY_THRESHOLD  # decision point: entropy (nats) at or above
    margin_threshold: float = MARGIN_THRESHOLD  # decision point: p(top1) - p(top2) at or below
    branch_tokens: int = 48  # tokens generated per explored branch
    routing: bool = False  # record MoE expert routing per token and layer (o3viz.hooks.routing)
    routing_top_n: int | None = None  # keep the n most probable experts per token (None: all, fp16)
    routing_prefill: bool = False  # also record the prompt tokens' chosen experts
    logit_lens: Sequence[int] = ()  # layers whose residual is read through the final norm + unembedding
    lens_top_k: int = 5  # tokens kept per layer and generated token by the logit lens
    moefy: tuple[int, int] | None = None  # (E, k): run the dense model split into E experts, k per token


def resolve_layers(layers: str | Sequence[int], num_layers: int) -> list[int]:
    """Layer indices from ``"auto"``, ``"all"``, ``"none"`` or a list (negative counts from the end)."""
    if isinstance(layers, str):
        if layers == "auto":
            return sorted({0, num_layers // 2, num_layers - 1})
        if layers == "all":
            return list(range(num_layers))
        if layers == "none":
            return []
        raise UsageError(f"layers must be 'auto', 'all', 'none' or a list of indices, not {layers!r}")
    out = []
    for i in layers:
        j = int(i) + num_layers if int(i) < 0 else int(i)
        if not 0 <= j < num_layers:
            raise UsageError(f"layer {i} does not exist; the model has layers 0..{num_layers - 1}")
        out.append(j)
    return sorted(set(out))


def _resolve_task(task: Task | str | None, prompt: str) -> Task:
    if isinstance(task, Task):
        return task
    if task is None:
        return Task(prompt, detect_task_type(prompt))
    if task not in TASK_KINDS:
        raise UsageError(f"task must be a Task or one of {', '.join(TASK_KINDS)}, not {task!r}")
    return Task(prompt, task)


def _check_args(
    prompt: str,
    max_new_tokens: int,
    capture_cfg: CaptureConfig,
    daa: DAAConfig,
    explore: int,
    temperature: float,
) -> None:
    if not isinstance(prompt, str) or not prompt.strip():
        raise UsageError("the prompt is empty")
    if max_new_tokens < 1:
        raise UsageError(f"max_new_tokens must be at least 1, not {max_new_tokens}")
    if daa.mode not in ("off", "observe", "allocate"):
        raise UsageError(f"DAA mode must be off, observe or allocate, not {daa.mode!r}")
    if explore < 0 or temperature <= 0:
        raise UsageError("explore must be >= 0 and temperature > 0")
    if capture_cfg.top_k is not None and capture_cfg.top_k < 1:
        raise UsageError(f"top_k must be at least 1, not {capture_cfg.top_k}")
    if capture_cfg.dtype not in ("float16", "float32"):
        raise UsageError(f"dtype must be float16 or float32, not {capture_cfg.dtype!r}")
    check_internals(capture_cfg)


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
    _check_args(prompt, max_new_tokens, cfg, daa, explore, temperature)
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
    answer = extract_answer(text, task.kind)
    return Round(
        index=0,
        prompt=layout.prompt,
        rendered_prompt=layout.rendered,
        prompt_tokens=layout.tokens,
        segments=layout.segments,
        text=text,
        tokens=tokens,
        steps=build_steps(text, tokens),
        decision_points=decision_points(tokens, cfg.entropy_threshold, cfg.margin_threshold),
        answer=answer,
        confidence=answer_confidence(text, answer, tokens),
        info={"prompt_tokens": len(layout.ids), "generated_tokens": len(gen.ids), "stop_reason": gen.reason},
    )


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
