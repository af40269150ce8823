"""How well labellers agree: people with each other (κ per pair, Krippendorff's α over all), and
each automatic labeller against each person or imported labeller, with precision and recall for
"this step is wrong", plus the steps where they disagree.

The automatic labellers, read from the trace:

- ``first wrong step`` (``o3viz.analysis.wrong_step.first_wrong_step``): its step is wrong, the
  steps before it correct, the steps after it unlabelled (as MR-GSM8K's first-error labels);
- ``check verdicts``: a step with a failing check tied to it is wrong, every other step correct;
- ``step classifier``: the step's type, against the types people corrected;
- ``importance``: the trace's top quarter of steps by importance "mattered", against the steps
  people marked as the first error;
- ``verifier: NAME``: each pluggable verifier's verdicts stored on the trace (``o3viz verify``):
  ``ok`` is correct, ``wrong`` wrong; ``unsure`` and unjudged steps take no part.

Verdicts compare as wrong / not wrong; ``unsure`` labels take no part.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Protocol

from o3viz.analysis.agreement import Estimate, alpha, kappa, precision_recall, proportion
from o3viz.analysis.wrong_step import FAILING, first_wrong_step
from o3viz.trace import Trace
from o3viz.trace.ids import step_ref
from o3viz.trace.importance import step_view

AUTO_FIRST_WRONG = "auto: first wrong step"
AUTO_CHECKS = "auto: check verdicts"
AUTO_TYPES = "auto: step classifier"
AUTO_IMPORTANCE = "auto: importance"
AUTO_VERIFIER = "verifier: "  # + the verifier's name
MATTERED_SHARE = 0.25  # the share of a trace's steps by importance that "mattered"
MAX_DISAGREEMENTS = 200

Step = tuple[str, int, int]  # (trace key, round, step)


class LabelLike(Protocol):
    key: str
    round: int
    step: int
    labeller: str
    verdict: str
    first_error: bool
    type: str | None


def auto_verdicts(key: str, trace: Trace) -> dict[str, dict[Step, str]]:
    """The automatic labellers' step verdicts for one trace: {labeller: {step: correct|wrong}}."""
    out: dict[str, dict[Step, str]] = {AUTO_FIRST_WRONG: {}, AUTO_CHECKS: {}}
    if not trace.rounds:
        return out
    rnd = trace.final
    first = first_wrong_step(trace)
    stop = first.step if first is not None else len(rnd.steps) - 1
    for st in rnd.steps[: stop + 1]:
        wrong = first is not None and st.index == first.step
        out[AUTO_FIRST_WRONG][(key, rnd.index, st.index)] = "wrong" if wrong else "correct"
    failing = {
        c.step for c in rnd.checks if c.step is not None and c.verdict in FAILING and c.kind != "answer"
    }
    for r in trace.rounds:
        for st in r.steps:
            bad = r.index == rnd.index and st.index in failing
            out[AUTO_CHECKS][(key, r.index, st.index)] = "wrong" if bad else "correct"
    for r in trace.rounds:
        for rec in r.verdicts:
            mine = out.setdefault(AUTO_VERIFIER + rec.verifier, {})
            for st, v in zip(r.steps, rec.verdicts, strict=False):
                if v in ("ok", "wrong"):
                    mine[(key, r.index, st.index)] = "correct" if v == "ok" else "wrong"
    return out


def mattered(key: str, trace: Trace) -> dict[Step, bool]:
    """The final round's steps by importance: the top ``MATTERED_SHARE`` True; {} without importance."""
    if not trace.rounds or not trace.final.importance:
        return {}
    rnd = trace.final
    scaled, _ = step_view(rnd.importance, len(rnd.steps))
    return {(key, rnd.index, i): v >= 1 - MATTERED_SHARE for i, v in enumerate(scaled) if v is not None}


@dataclass
class Pair:
    """Two labellers over the steps both labelled: κ, and for an automatic labeller ``a`` against
    a person ``b``, precision and recall of ``a``'s "wrong" against ``b``'s."""

    a: str
    b: str
    kappa: Estimate
    precision: Estimate | None = None
    recall: Estimate | None = None
    disagree: list[tuple[str, str, str, str]] = field(default_factory=list)  # (key, R:I, a's, b's)


@dataclass
class AgreementTable:
    people: list[str]  # people and imported labellers, in order of their first label
    pairs: list[Pair]  # person with person, then each automatic labeller with each person
    alpha: Estimate | None  # Krippendorff's α over all people (None with fewer than three)
    types: list[tuple[str, Estimate]] = field(default_factory=list)  # classifier accuracy per person

    def rows(self) -> list[dict]:
        """The table for people: one dict per pair."""
        out = []
        for p in self.pairs:
            row = {"labellers": f"{p.a} · {p.b}", "n": p.kappa.n, "κ [95% CI]": p.kappa.text()}
            row["precision"] = p.precision.text() if p.precision else "—"
            row["recall"] = p.recall.text() if p.recall else "—"
            row["disagree"] = len(p.disagree)
            out.append(row)
        return out


def _binary(v: str) -> str:
    return "wrong" if v == "wrong" else "correct"


def _pair(a: str, b: str, va: dict[Step, str], vb: dict[Step, str], scored: bool) -> Pair:
    both = sorted(set(va) & set(vb))
    xa, xb = [_binary(va[s]) for s in both], [_binary(vb[s]) for s in both]
    pair = Pair(a, b, kappa(xa, xb, [s[0] for s in both]))
    if scored:
        pair.precision, pair.recall = precision_recall([x == "wrong" for x in xa], [x == "wrong" for x in xb])
    for s, x, y in zip(both, xa, xb, strict=True):
        if x != y and len(pair.disagree) < MAX_DISAGREEMENTS:
            pair.disagree.append((s[0], step_ref(s[1], s[2]), x, y))
    return pair


def agreement_table(labels: list[LabelLike], traces: dict[str, Trace]) -> AgreementTable:
    """Agreement of the current ``labels`` (one per labeller and step) and the automatic labellers
    of ``traces`` (by key: the labelled ones)."""
    human: dict[str, dict[Step, str]] = defaultdict(dict)
    types: dict[str, dict[Step, str]] = defaultdict(dict)
    first_error: dict[str, dict[Step, bool]] = defaultdict(dict)
    for lab in labels:
        s = (lab.key, lab.round, lab.step)
        if lab.verdict != "unsure":
            human[lab.labeller][s] = lab.verdict
        first_error[lab.labeller][s] = bool(lab.first_error)
        if lab.type:
            types[lab.labeller][s] = lab.type
    people = list(dict.fromkeys(lab.labeller for lab in labels))
    pairs = [_pair(a, b, human[a], human[b], False) for i, a in enumerate(people) for b in people[i + 1 :]]
    auto: dict[str, dict[Step, str]] = defaultdict(dict)
    matter: dict[Step, bool] = {}
    for key, trace in traces.items():
        for name, verdicts in auto_verdicts(key, trace).items():
            auto[name].update(verdicts)
        matter.update(mattered(key, trace))
    verifiers = sorted(n for n in auto if n.startswith(AUTO_VERIFIER))
    for name in (AUTO_FIRST_WRONG, AUTO_CHECKS, *verifiers):
        pairs += [_pair(name, p, auto[name], human[p], True) for p in people if human[p]]
    if matter:
        as_verdict = {s: "wrong" if m else "correct" for s, m in matter.items()}
        for p in people:
            marked = {s: "wrong" if f else "correct" for s, f in first_error[p].items()}
            if any(f for f in first_error[p].values()):
                pairs.append(_pair(AUTO_IMPORTANCE, p, as_verdict, marked, True))
    table = AgreementTable(people, pairs, None, _type_accuracy(types, traces))
    if len(people) >= 3:
        steps = sorted({s for p in people for s in human[p]})
        units = [[human[p][s] for p in people if s in human[p]] for s in steps]
        table.alpha = alpha([[_binary(v) for v in u] for u in units], [s[0] for s in steps])
    return table


def _type_accuracy(types: dict[str, dict[Step, str]], traces: dict[str, Trace]) -> list[tuple[str, Estimate]]:
    """The step classifier's accuracy against each person's type corrections."""
    out = []
    for person, given in types.items():
        same = n = 0
        for (key, r, i), t in given.items():
            trace = traces.get(key)
            if trace is None or r >= len(trace.rounds) or i >= len(trace.rounds[r].steps):
                continue
            n += 1
            same += trace.rounds[r].steps[i].type == t
        out.append((f"{AUTO_TYPES} · {person}", proportion(same, n)))
    return out
