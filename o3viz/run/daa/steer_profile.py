"""Which heads steering acts on: ``all``, the user's ``layer.head`` list, or ``auto``, profiled the
way PASTA does on a few prompts of the task with known answers (``o3viz.tasks.steering``).

PASTA steers each head alone on a small set and keeps the heads that help most. o3viz profiles
whole layers instead (L forwards per prompt rather than L × H: 30 instead of 270 on the embedded
model, which keeps ``auto`` to seconds on a CPU): steering layer ℓ's heads alone, it scores the
mean log-probability of a compliant, correct reply (teacher-forced) against the unsteered score,
and steers every head of the ``TOP_LAYERS`` layers that gained most. The scores, the prompts and
the reason are recorded in the trace (``SteerRecord.info``). The result depends only on the model
and α, so it is kept per model for the process.
"""

from __future__ import annotations

import torch

from o3viz.hooks.instrument import ATTN_NAME, install
from o3viz.hooks.recorder import Recorder, RecorderSpec
from o3viz.hooks.steer import parse_steer_heads, steer_bias
from o3viz.run.config import DAAConfig, SteerSpan
from o3viz.run.daa.steer_spans import resolve_spans
from o3viz.run.prompt import layout_prompt
from o3viz.tasks.steering import FAMILIES, SteerTask, steering_tasks

TOP_LAYERS = 3  # layers whose heads ``auto`` steers
PROFILE_START, PROFILE_N = 17, 2  # tasks 17 and 18 of each family; the benchmark evaluates 0..16
_CACHE: dict[tuple, tuple[list[tuple[int, int]], dict]] = {}


def profile_tasks() -> list[SteerTask]:
    return [t for f in FAMILIES for t in steering_tasks(f, PROFILE_N, PROFILE_START)]


def choose_heads(model, tokenizer, cfg: DAAConfig) -> tuple[str | list[tuple[int, int]], str, dict]:
    """(heads for ``head_mask``, how they were chosen: all | list | auto, why)."""
    heads = parse_steer_heads(cfg.steer_heads) if isinstance(cfg.steer_heads, str) else cfg.steer_heads
    if heads == "all":
        return "all", "all", {}
    if heads == "auto":
        chosen, info = profile_heads(model, tokenizer, cfg.steer_alpha)
        return chosen, "auto", info
    return [(int(a), int(b)) for a, b in heads], "list", {}


def _example(tokenizer, task: SteerTask) -> tuple[torch.Tensor, list[tuple[int, int]], int]:
    """(ids (1, P + T), the marked key ranges, P) of a task with its target reply appended."""
    layout = layout_prompt(tokenizer, task.prompt)
    ranges = [(s.token_start, s.token_end) for s in resolve_spans(layout, [SteerSpan(task.span)])]
    target = tokenizer(task.target, add_special_tokens=False)["input_ids"]
    return torch.tensor([layout.ids + list(target)]), ranges, len(layout.ids)


@torch.inference_mode()
def _score(model, examples, alpha: float, layer: int | None) -> float:
    """Mean log-probability of the target tokens, steering ``layer``'s heads alone (None: none)."""
    c = model.config
    total, count = 0.0, 0
    for ids, ranges, p in examples:
        rec = Recorder(
            RecorderSpec(c.num_hidden_layers, c.num_attention_heads, p, prefill=False, keep_steps=False)
        )
        rec.record = False
        if layer is not None:
            mask = torch.zeros(c.num_hidden_layers, c.num_attention_heads)
            mask[layer] = 1.0
            bias = steer_bias(p, ranges, alpha, ids.shape[1])
            rec.set_bias(bias.to(model.device), mask.to(model.device), record_before=False)
        with install(model, ATTN_NAME, rec):
            keep = ids.shape[1] - p + 1  # positions P-1 .. end: the vocabulary projection only where scored
            logits = model(input_ids=ids.to(model.device), logits_to_keep=keep).logits[0, :-1].float()
        logp = torch.log_softmax(logits, -1).gather(-1, ids[0, p:, None].to(logits.device))
        total, count = total + float(logp.sum()), count + logp.numel()
    return total / max(count, 1)


def profile_heads(
    model, tokenizer, alpha: float, top: int = TOP_LAYERS
) -> tuple[list[tuple[int, int]], dict]:
    """The heads ``auto`` steers and why (see the module docstring)."""
    key = (id(model), str(getattr(model, "name_or_path", "")), float(alpha), top)
    if key in _CACHE:
        return _CACHE[key]
    tasks = profile_tasks()
    examples = [_example(tokenizer, t) for t in tasks]
    n_layers, n_heads = model.config.num_hidden_layers, model.config.num_attention_heads
    base = _score(model, examples, alpha, None)
    gains = [_score(model, examples, alpha, layer) - base for layer in range(n_layers)]
    order = sorted(range(n_layers), key=lambda i: -gains[i])
    chosen = sorted([i for i in order[:top] if gains[i] > 0] or order[:1])
    info = {
        "method": "layer profiling: steer one layer's heads alone, score the target reply's mean log-prob",
        "profile_tasks": [f"{t.family}:{t.index}" for t in tasks],
        "unsteered_logprob": round(base, 4),
        "layer_gain_nats": [round(g, 4) for g in gains],
        "chosen_layers": chosen,
        "why": f"the {len(chosen)} layer(s) whose steering raised the compliant reply's log-prob most",
    }
    if len(_CACHE) >= 4:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = ([(layer, h) for layer in chosen for h in range(n_heads)], info)
    return _CACHE[key]
