"""Putting the running answer on traces: the request (``AnswersRequest``, built once by the CLI or
a page), one trace (``add_answers``: the stated answers, then a probe's forced answers at the
chosen boundaries) and a stored dataset (``run_dataset``: resumable, with progress, each trace
saved through ``o3viz.store.replace.replace_trace`` as soon as it is done, so labels and branch
links follow it and a stopped run loses nothing already stored).

A round already holding the probe's record with the same settings (``every``, ``suffix``) is
skipped, so a rerun picks up where a stopped one ended. Forced answers come from
``o3viz.answers.probes`` (imported only when a probe is asked for).
"""

from __future__ import annotations

from collections.abc import Callable
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
    "MAX_TRACES",
    "AnswersReport",
    "AnswersRequest",
    "add_answers",
    "answers_json",
    "run_dataset",
]

ProbeName = str  # "none" or a name in o3viz.answers.probes.PROBES
MAX_TRACES = 100_000  # traces of one dataset run
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


def _same_settings(rec: AnswerRecord, probe: Any, every: int) -> bool:
    info = getattr(probe, "info", {}) or {}
    return rec.info.get("every") == every and rec.info.get("suffix") == info.get("suffix")


def _forced_record(trace: Trace, r: int, probe: Any, every: int, ref: str | None) -> AnswerRecord:
    """The probe's answers at the boundaries ``refine_first_correct`` picks in round ``r``."""
    rnd = trace.rounds[r]
    n = len(rnd.steps)

    def ask(boundaries: list[int]) -> list[Any]:
        got = {res.step: res for res in probe.probe(trace, r, boundaries, ref)}
        return [got.get(b) for b in boundaries]

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
    info.update(every=every, reference=ref, when=timestamp(), trace_model=trace_model)
    info["other_model"] = bool(info.get("model")) and info.get("model") != trace_model
    info.setdefault("logprobs", bool(rec.p_reference))
    rec.info = info
    return rec


def add_answers(trace: Trace, probe: Any | None = None, every: int = 1, *, redo: bool = False) -> bool:
    """Put the running answer on ``trace``: a fresh ``stated`` record on every round, and with
    ``probe`` its forced answers on every round with steps (skipping a round that holds the
    probe's record with the same settings, unless ``redo``). True when anything changed."""
    changed = add_stated(trace) > 0
    if probe is None:
        return changed
    ref = reference_answer(trace.task.reference)
    for r, rnd in enumerate(trace.rounds):
        if not rnd.steps:
            continue
        old = next((i for i, x in enumerate(rnd.answers) if x.probe == probe.name), None)
        if old is not None and not redo and _same_settings(rnd.answers[old], probe, every):
            continue
        rec = _forced_record(trace, r, probe, every, ref)
        if old is None:
            rnd.answers.append(rec)
        else:
            rnd.answers[old] = rec
        changed = True
    return changed


def holds_answers(trace: Trace, probe: Any | None, every: int) -> bool:
    """Whether every round with steps already holds what ``add_answers`` would add."""
    for rnd in trace.rounds:
        if not rnd.steps:
            continue
        if not any(x.probe == STATED for x in rnd.answers):
            return False
        if probe is not None and not any(
            x.probe == probe.name and _same_settings(x, probe, every) for x in rnd.answers
        ):
            return False
    return True


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


@dataclass
class AnswersReport:
    dataset: str
    total: int = 0
    changed: int = 0
    skipped: int = 0  # already held the record
    failed: list[str] = field(default_factory=list)  # "KEY: problem"
    stopped: bool = False  # interrupted (Ctrl-C): what was done is stored
    keys: list[str] = field(default_factory=list)  # every trace's key after the run, in order

    def summary(self) -> str:
        done = f"{self.changed} trace(s) of {self.dataset!r} given their running answer"
        done += f", {self.skipped} already had it" + (f", {len(self.failed)} failed" if self.failed else "")
        return done + ("; stopped early, run it again to go on" if self.stopped else "")


Progress = Callable[[int, int, str, str], None]  # (done, total, key, what happened)


def run_dataset(
    store: Any, dataset: str, request: AnswersRequest, on_progress: Progress | None = None
) -> AnswersReport:
    """Every trace of ``dataset`` in ``store`` gets its running answer, each saved as soon as it is
    done (``replace_trace``). A Ctrl-C stops between traces' saves and reports it."""
    from o3viz.store.query import Query
    from o3viz.store.replace import branch_parents, replace_trace

    request.validate()
    probe = request.make_probe()
    keys = [r[0] for r in store.select(Query(dataset=[dataset]), ("key",), max_rows=MAX_TRACES)]
    if not keys:
        raise UsageError(f"no traces in dataset {dataset!r} (`o3viz library list` shows the datasets)")
    report = AnswersReport(dataset, total=len(keys))
    branches = branch_parents(store)
    try:
        for i, key in enumerate(keys):
            what = "skipped"
            try:
                trace = store.editable_trace(key)  # changed below: never the process's shared copy
                if not request.redo and holds_answers(trace, probe, request.every):
                    report.skipped += 1
                elif add_answers(trace, probe, request.every, redo=request.redo):
                    key = replace_trace(store, key, trace, branches=branches)
                    report.changed += 1
                    what = "done"
                else:
                    report.skipped += 1
            except O3vizError as exc:  # one bad trace does not stop the run: it is named and left
                report.failed.append(f"{key}: {exc}")
                what = "failed"
            report.keys.append(key)
            if on_progress is not None:
                on_progress(i + 1, len(keys), key, what)
    except KeyboardInterrupt:
        report.stopped = True
    return report
