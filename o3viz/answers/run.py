"""Putting the running answer on traces: the request (``AnswersRequest``, built once by the CLI or
a page) and one trace (``add_answers``: the stated answers, then a probe's forced answers at the
chosen boundaries). A stored dataset is ``o3viz.answers.dataset.run_dataset``.

A forced record carries, in ``info["settings"]``, what made it (``probe_settings``: the probe's
kind, the model by its full path, hub id or served name, the endpoint's address, the suffix,
``max_new_tokens`` and ``every``). A rerun skips a round whose record has the same settings and
redoes one whose settings differ (saying which), so a stopped run picks up where it ended and a
changed setting never keeps the old answers. A probe that could not ask at some boundary (a
failed request, an unreadable reply: ``ProbeResult.failed``) raises ``ProbeFailed``: nothing of
that trace is stored, the run counts it as failed, and a rerun redoes exactly those traces.
Forced answers come from ``o3viz.answers.probes`` (imported only when a probe is asked for).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from o3viz.analysis.answer_figures import refine_first_correct, trace_answer_figures
from o3viz.analysis.running_answer import STATED, add_stated, grade, running_answer
from o3viz.errors import O3vizError, UsageError
from o3viz.plugins import MAX_OPTION_CHARS
from o3viz.text.reference import reference_answer
from o3viz.trace import Trace
from o3viz.trace.answers import AnswerRecord, clip_answer
from o3viz.trace.core import timestamp
from o3viz.trace.ids import make_id

__all__ = [
    "MAX_EVERY",
    "AnswersRequest",
    "ProbeFailed",
    "add_answers",
    "answers_due",
    "answers_json",
    "holds_answers",
    "probe_settings",
]

ProbeName = str  # "none" or a name in o3viz.answers.probes.PROBES
MAX_EVERY = 10_000
_MODEL_OPTIONS = ("model_id", "served_model", "model")  # what --model is called by each probe's factory


@dataclass
class AnswersRequest:
    """One ``o3viz answers`` job: which probe, where, and with what settings.

    >>> AnswersRequest(probe="none").validate()
    >>> AnswersRequest(every=0).validate()
    Traceback (most recent call last):
    o3viz.errors.UsageError: --every must be 1 to 10000, not 0
    """

    probe: ProbeName = "none"  # none: stated answers only
    every: int = 1  # probe every K-th step boundary, then refine (o3viz.analysis.answer_figures)
    suffix: str | None = None  # the answer-forcing suffix (None: the probe's default for the template)
    base_url: str | None = None  # endpoint: an OpenAI-compatible address ending in /v1
    model: str | None = None  # local: a model to load (None: the embedded one); endpoint: the served name
    options: dict[str, str] = field(default_factory=dict)  # -V key=value: the probe factory's own options
    redo: bool = False  # replace a record of the same probe and settings instead of skipping it

    def validate(self) -> None:
        from o3viz.answers.probes import PROBES

        if self.probe != "none" and self.probe not in PROBES:
            names = ", ".join(("none", *PROBES.names()))
            raise UsageError(f"--probe must be one of {names}, not {str(self.probe)[:40]!r}")
        if (
            isinstance(self.every, bool)
            or not isinstance(self.every, int)
            or not 1 <= self.every <= MAX_EVERY
        ):
            raise UsageError(f"--every must be 1 to {MAX_EVERY}, not {self.every}")
        if self.suffix is not None and not 0 < len(self.suffix) <= MAX_OPTION_CHARS:
            raise UsageError(f"--suffix must be 1 to {MAX_OPTION_CHARS} characters")
        if self.probe == "endpoint" and not self.base_url:
            raise UsageError("--probe endpoint needs --base-url (an OpenAI-compatible address ending in /v1)")

    def make_probe(self) -> Any | None:
        """The probe (``o3viz.answers.probes.PROBES``), or None for ``none``; the named flags go to
        the factory where it takes them, ``-V`` options as they are."""
        if self.probe == "none":
            return None
        try:
            from o3viz.answers.probes import PROBES
        except ImportError as exc:
            raise UsageError(
                f"--probe {self.probe}: the forced-answer probes are not installed ({exc})"
            ) from None
        plugin = PROBES.get(self.probe)
        given: dict[str, Any] = dict(self.options)
        for flag, names in (("suffix", ("suffix",)), ("base_url", ("base_url",)), ("model", _MODEL_OPTIONS)):
            value = getattr(self, flag)
            if value is None:
                continue
            name = next((n for n in names if plugin.option(n) is not None), None)
            if name is None:
                raise UsageError(f"--probe {self.probe} takes no --{flag.replace('_', '-')}")
            given[name] = value
        return PROBES.make(self.probe, given)


class ProbeFailed(O3vizError, RuntimeError):
    """The probe could not ask at some boundary of a round: the trace keeps no record of it."""


def probe_settings(probe: Any, trace: Trace, round_index: int, every: int) -> dict:
    """What makes ``probe``'s forced answers on that round (stored as the record's
    ``info["settings"]``, compared on a rerun): the probe's own ``settings`` and ``every``."""
    made = getattr(probe, "settings", None)
    if callable(made):
        got = dict(made(trace, round_index))
    else:  # a plug-in probe without settings(): what its name and info say
        info = getattr(probe, "info", {}) or {}
        got = {
            "probe": probe.name,
            **{k: info.get(k) for k in ("model", "endpoint", "suffix", "max_new_tokens")},
        }
    got["every"] = every
    return got


def settings_change(rec: AnswerRecord, settings: dict) -> str | None:
    """None when ``rec`` was made with ``settings``; else the first difference in a few words.

    >>> rec = AnswerRecord("p", "forced", [], [], [], info={"settings": {"every": 1, "max_new_tokens": 16}})
    >>> settings_change(rec, {"every": 1, "max_new_tokens": 8})
    'max_new_tokens was 16, now 8'
    """
    old = rec.info.get("settings")
    if not isinstance(old, dict):
        return "its record names no settings"
    for name in (*settings, *(k for k in old if k not in settings)):
        if old.get(name) != settings.get(name):
            return f"{name} was {_shown(old.get(name))}, now {_shown(settings.get(name))}"
    return None


def _shown(value: Any) -> str:
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 60 else text[:59] + "…"


def _forced_record(trace: Trace, r: int, probe: Any, settings: dict, ref: str | None) -> AnswerRecord:
    """The probe's answers at the boundaries ``refine_first_correct`` picks in round ``r``, or
    ``ProbeFailed`` at the first batch in which the probe could not ask."""
    rnd = trace.rounds[r]
    n = len(rnd.steps)

    def ask(boundaries: list[int]) -> list[Any]:
        results = probe.probe(trace, r, boundaries, ref)
        bad = [res for res in results if getattr(res, "failed", False)]
        if bad:
            raise ProbeFailed(
                f"round {r}: the probe failed at {len(bad)} of {len(results)} step boundaries "
                f"({' '.join(str(bad[0].note).split())[:200]}); nothing stored, a rerun redoes it"
            )
        got = {res.step: res for res in results}
        return [got.get(b) for b in boundaries]

    every = settings["every"]
    found = refine_first_correct(n, ask, lambda res: None if res is None else grade(res.forced, ref), every)
    rec = AnswerRecord(probe.name, "forced", [None] * n, [None] * n, [None] * n)
    probs: list[float | None] = [None] * n
    for b, res in found.items():
        if res is None or not 0 <= b < n:
            continue
        rec.answers[b] = clip_answer(res.forced)
        rec.positions[b] = rnd.steps[b].end
        rec.correct[b] = grade(rec.answers[b], ref)
        probs[b] = res.p_reference
    rec.p_reference = probs if any(p is not None for p in probs) else []
    info = dict(getattr(probe, "info", {}) or {})
    trace_model = trace.provenance.model_id or ""
    info.update(every=every, reference=ref, when=timestamp(), trace_model=trace_model, settings=settings)
    info["other_model"] = bool(info.get("model")) and info.get("model") != trace_model
    info.setdefault("logprobs", bool(rec.p_reference))
    rec.info = info
    return rec


def _due_rounds(trace: Trace, probe: Any, every: int, redo: bool) -> list[tuple[int, dict, str]]:
    """(round, settings, why) for each round with steps whose forced record is missing, made with
    other settings, or (``redo``) to be made again."""
    due = []
    for r, rnd in enumerate(trace.rounds):
        if not rnd.steps:
            continue
        settings = probe_settings(probe, trace, r, every)
        old = next((x for x in rnd.answers if x.probe == probe.name), None)
        why = "not probed yet" if old is None else settings_change(old, settings)
        if why is None and redo:
            why = "--redo"
        if why is not None:
            due.append((r, settings, why))
    return due


def add_answers(trace: Trace, probe: Any | None = None, every: int = 1, *, redo: bool = False) -> bool:
    """Put the running answer on ``trace``: a fresh ``stated`` record on every round, and with
    ``probe`` its forced answers on every round with steps (skipping a round that holds the
    probe's record with the same settings, unless ``redo``). True when anything changed.
    ``ProbeFailed`` when the probe could not ask; ``trace`` may then hold some rounds' new
    records, so a caller stores nothing of it."""
    changed = add_stated(trace) > 0
    if probe is None:
        return changed
    ref = reference_answer(trace.task.reference)
    for r, settings, _why in _due_rounds(trace, probe, every, redo):
        rnd = trace.rounds[r]
        rec = _forced_record(trace, r, probe, settings, ref)
        old = next((i for i, x in enumerate(rnd.answers) if x.probe == probe.name), None)
        if old is None:
            rnd.answers.append(rec)
        else:
            rnd.answers[old] = rec
        changed = True
    return changed


def answers_due(trace: Trace, probe: Any | None, every: int) -> str | None:
    """None when every round with steps already holds what ``add_answers`` would add; else why
    not, in a few words (a settings change names the setting)."""
    for rnd in trace.rounds:
        if rnd.steps and not any(x.probe == STATED for x in rnd.answers):
            return "no stated answers yet"
    if probe is None:
        return None
    due = _due_rounds(trace, probe, every, redo=False)
    return due[0][2] if due else None


def holds_answers(trace: Trace, probe: Any | None, every: int) -> bool:
    """Whether every round with steps already holds what ``add_answers`` would add."""
    return answers_due(trace, probe, every) is None


def answers_json(key: str | None, trace: Trace) -> dict:
    """One trace's running answer as ``o3viz answers --json`` prints it (one JSON Lines object)."""
    rnd = trace.final
    series = running_answer(rnd, trace.task.reference) if trace.rounds else []
    figures = trace_answer_figures(trace)
    forced = next((x for x in rnd.answers if x.kind == "forced"), None)
    out: dict[str, Any] = {
        "key": key,
        "reference": reference_answer(trace.task.reference),
        "probe": forced.probe if forced is not None else None,
        "other_model": bool(forced.info.get("other_model")) if forced is not None else False,
        "steps": [
            {
                "step": make_id("step", rnd.index, s.step),
                "stated": s.stated,
                "forced": s.forced,
                "p_reference": s.p_reference,
                "correct": s.correct,
                "answer": s.answer,
                "source": s.source,
            }
            for s in series
        ],
    }
    out.update(figures.to_dict())
    return out
