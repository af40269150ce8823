"""A paired run's side settings: what a side changes (``PairSetting``, parsed from
``daa=allocate,strength=2`` by ``parse_setting``), what a paired run's traces record about their
side (``side_settings``, kept in each trace's ``info["paired_run"]``) and the check that keeps a rerun with other settings out of the same two
datasets (``check_resume``): a rerun with another token limit, rounds or model would otherwise skip
the tasks already there and table the mixture as one run.

>>> check_resume("d · A: daa=off", {"max_new_tokens": 8}, {"max_new_tokens": 4})
Traceback (most recent call last):
...
o3viz.errors.UsageError: 'd · A: daa=off' already holds runs with other settings: max_new_tokens 4 (now 8); give this run a new --dataset NAME, or rerun with the same settings to resume
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from o3viz.errors import UsageError
from o3viz.hooks.steer import parse_steer_heads
from o3viz.run.config import DAAConfig, SteerSpan
from o3viz.run.daa.modes import DAA_MODES
from o3viz.run.provenance import settings_of
from o3viz.run.request import RunRequest

SETTING_KEYS = ("daa", "strength", "model", "steer", "alpha", "heads")


@dataclass(frozen=True)
class PairSetting:
    """One side's settings: what it changes from the shared ``RunRequest`` (its DAA mode, steering
    and model); ``label`` names it in the dataset's name."""

    daa: DAAConfig = field(default_factory=DAAConfig)
    model: str | None = None  # None: the shared request's model
    label: str = "daa=off"

    def apply(self, req: RunRequest) -> RunRequest:
        return dataclasses.replace(req, daa=self.daa, model=self.model or req.model)


def _pairs(text: str) -> list[tuple[str, str]]:
    """``k=v`` items separated by commas; an item without ``=`` continues the previous value (so
    ``heads=3.1,5.0`` keeps its comma)."""
    out: list[tuple[str, str]] = []
    for item in text.split(","):
        if "=" in item:
            k, _, v = item.partition("=")
            out.append((k.strip().lower(), v.strip()))
        elif out and item.strip():
            out[-1] = (out[-1][0], f"{out[-1][1]},{item.strip()}")
        elif item.strip():
            raise UsageError(f"setting {text!r}: write key=value items, e.g. daa=allocate,strength=2")
    return out


def parse_setting(text: str) -> PairSetting:
    """A side's settings from ``key=value`` items separated by commas: ``daa`` (off, observe,
    allocate, steer), ``strength`` (allocate's λ), ``model`` (a hub id or path), ``steer`` (a prompt
    segment to steer towards: question, instruction or 'sentence N'; sets daa=steer), ``alpha`` and
    ``heads`` (steering's). An empty text is the shared settings with DAA off.

    >>> parse_setting("steer=question,alpha=0.05").daa.mode
    'steer'
    >>> parse_setting("model=/m/qwen").label
    'model=qwen'
    """
    found = dict.fromkeys(SETTING_KEYS, None)
    for k, v in _pairs(text or ""):
        if k not in found:
            raise UsageError(f"setting {text!r}: unknown key {k!r}; the keys are {', '.join(SETTING_KEYS)}")
        if not v:
            raise UsageError(f"setting {text!r}: {k}= has no value")
        found[k] = v
    mode = (found["daa"] or ("steer" if found["steer"] else "off")).lower()
    if mode not in DAA_MODES:
        raise UsageError(f"setting {text!r}: daa must be one of {', '.join(DAA_MODES)}, not {mode!r}")
    if (mode == "steer") != bool(found["steer"]):
        raise UsageError(
            f"setting {text!r}: steering needs steer=SEGMENT (question, instruction, sentence N)"
        )
    kw: dict[str, Any] = {"mode": mode}
    try:
        if found["strength"] is not None:
            kw["strength"] = float(found["strength"])
        if mode == "steer":
            kw["spans"] = [SteerSpan(segment=found["steer"])]
            if found["alpha"] is not None:
                kw["steer_alpha"] = float(found["alpha"])
            if found["heads"] is not None:
                kw["steer_heads"] = parse_steer_heads(found["heads"])
    except ValueError as exc:
        raise UsageError(f"setting {text!r}: {exc}") from None
    daa = DAAConfig(**kw)
    daa.validate()
    parts = [f"{k}={found[k]}" for k in ("strength", "steer", "alpha", "heads") if found[k]]
    if found["model"]:
        parts.append(f"model={found['model'].rstrip('/').rsplit('/', 1)[-1]}")
    if mode != "off" or not parts:
        parts.insert(0, f"daa={mode}")
    return PairSetting(daa=daa, model=found["model"], label=" ".join(parts))


def side_settings(sub: RunRequest) -> dict:
    """What every run of a side shares: its ``RunRequest`` ``sub`` as the trace's provenance writes
    it (``settings_of``), without the task and with the model asked for."""
    out = settings_of(sub)
    out.pop("task_id", None)
    return {**out, "model": sub.model}


def recorded_settings(trace: Any) -> dict | None:
    """The side settings a stored trace was run with: ``info["paired_run"]``, or for a trace of an
    older paired run its provenance's settings (without the model); None when it has neither."""
    mark = trace.info.get("paired_run")
    if isinstance(mark, dict) and isinstance(mark.get("settings"), dict):
        return mark["settings"]
    settings = dict(trace.provenance.settings or {})
    settings.pop("task_id", None)
    return settings or None


def _differences(want: dict, have: dict, prefix: str = "") -> list[str]:
    """``setting old (now new)`` for every setting both dicts hold with different values (nested
    dicts by their dotted names; a setting only one side records is not compared)."""
    out = []
    for k, v in want.items():
        if k not in have:
            continue
        if isinstance(v, dict) and isinstance(have[k], dict):
            out += _differences(v, have[k], f"{prefix}{k}.")
        elif v != have[k]:
            out.append(f"{prefix}{k} {have[k]!r} (now {v!r})")
    return out


def check_resume(dataset: str, want: dict, stored: dict | None) -> None:
    """A one-line ``UsageError`` unless ``stored`` (the settings of a trace already in ``dataset``)
    equals ``want`` (this run's ``side_settings``) in every setting both record."""
    where = f"{dataset!r} already holds"
    fix = "give this run a new --dataset NAME, or rerun with the same settings to resume"
    if stored is None:
        raise UsageError(f"{where} traces whose settings are not recorded: {fix}")
    diff = _differences(want, stored)
    if diff:
        shown = ", ".join(diff[:4]) + (f" and {len(diff) - 4} more" if len(diff) > 4 else "")
        raise UsageError(f"{where} runs with other settings: {shown}; {fix}")


__all__ = [
    "SETTING_KEYS",
    "PairSetting",
    "check_resume",
    "parse_setting",
    "recorded_settings",
    "side_settings",
]
