"""What a paired run's traces record about their side (``side_settings``, kept in each trace's
``info["paired_run"]``) and the check that keeps a rerun with other settings out of the same two
datasets (``check_resume``): a rerun with another token limit, rounds or model would otherwise skip
the tasks already there and table the mixture as one run.

>>> check_resume("d · A: daa=off", {"max_new_tokens": 8}, {"max_new_tokens": 4})
Traceback (most recent call last):
...
o3viz.errors.UsageError: 'd · A: daa=off' already holds runs with other settings: max_new_tokens 4 (now 8); give this run a new --dataset NAME, or rerun with the same settings to resume
"""

from __future__ import annotations

from typing import Any

from o3viz.errors import UsageError
from o3viz.run.provenance import settings_of
from o3viz.run.request import RunRequest


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


__all__ = ["check_resume", "recorded_settings", "side_settings"]
