"""What the pluggable verifiers said (``rounds[].verdicts``, ``o3viz.verify.verifiers``), read for
the map and the details panel: the verifiers a trace holds, every verifier's verdict on one step,
the first wrong step by a chosen verifier (``None``: the checks, ``first_wrong_step``), and that
verifier's verdicts by step id, which the map's checks lane draws (``lane_verdicts``).

>>> from o3viz.trace import Round, Step, Task, Trace
>>> from o3viz.trace.verdicts import VerdictRecord
>>> steps = [Step(index=i, start=0, end=1, text="x") for i in range(3)]
>>> rec = VerdictRecord("prm:m", ["ok", "wrong", None], [0.9, 0.2, None], {"kind": "prm"})
>>> t = Trace(task=Task(question="q"), rounds=[Round(index=0, steps=steps, verdicts=[rec])])
>>> verifier_names(t), first_wrong_by(t, "prm:m").step
(['prm:m'], 1)
>>> [(v.verifier, v.verdict, v.score) for v in step_verdicts(t.final, 1)]
[('prm:m', 'wrong', 0.2)]
>>> lane = lane_verdicts(t, "prm:m")
>>> lane.label, lane.steps["step:0:1"], "step:0:2" in lane.steps
('checks: prm:m', ('wrong', 0.2), False)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from o3viz.analysis.wrong_step import FirstWrong, first_wrong_step
from o3viz.trace import Round, Trace
from o3viz.trace.ids import make_id


@dataclass
class StepVerdictRow:
    """One verifier's verdict on one step, for the details panel."""

    verifier: str
    kind: str  # claim checker | code tests | prm | judge | combined | ...
    verdict: str | None  # ok | wrong | unsure | None (not judged)
    score: float | None = None


@dataclass
class LaneVerdicts:
    """One verifier's verdicts as the map's checks lane draws them: by step id (``step:R:I``), the
    judged steps only (a step the verifier did not judge has no mark)."""

    verifier: str
    kind: str  # claim checker | code tests | prm | judge | combined | ...
    steps: dict[str, tuple[str, float | None]] = field(default_factory=dict)  # id -> (verdict, score)

    @property
    def label(self) -> str:
        """The lane's name on the map: whose verdicts it shows."""
        return f"checks: {self.verifier}"


def lane_verdicts(trace: Trace, verifier: str | None) -> LaneVerdicts | None:
    """``verifier``'s verdicts on every round's steps, for the map (``None``: the checks, drawn
    from the outline as before; also when no round holds that verifier)."""
    if verifier is None:
        return None
    out, found = LaneVerdicts(verifier, ""), False
    for rnd in trace.rounds:
        rec = next((r for r in rnd.verdicts if r.verifier == verifier), None)
        if rec is None:
            continue
        found, out.kind = True, out.kind or str(rec.info.get("kind", ""))
        for k, (step, v) in enumerate(zip(rnd.steps, rec.verdicts, strict=False)):
            if v is not None:
                score = rec.scores[k] if k < len(rec.scores) else None
                out.steps[make_id("step", rnd.index, step.index)] = (v, score)
    return out if found else None


def verifier_names(trace: Trace) -> list[str]:
    """Every verifier with verdicts in the trace, in the order first met."""
    seen: dict[str, None] = {}
    for rnd in trace.rounds:
        for rec in rnd.verdicts:
            seen.setdefault(rec.verifier, None)
    return list(seen)


def step_verdicts(rnd: Round, step: int) -> list[StepVerdictRow]:
    """Every verifier's verdict on ``rnd.steps[step]``."""
    out = []
    for rec in rnd.verdicts:
        if 0 <= step < len(rec.verdicts):
            score = rec.scores[step] if step < len(rec.scores) else None
            out.append(StepVerdictRow(rec.verifier, str(rec.info.get("kind", "")), rec.verdicts[step], score))
    return out


def first_wrong_by(trace: Trace, verifier: str | None = None) -> FirstWrong | None:
    """The final round's first wrong step by ``verifier`` (``None``: by the checks)."""
    if verifier is None:
        return first_wrong_step(trace)
    rec = next((r for r in trace.final.verdicts if r.verifier == verifier), None) if trace.rounds else None
    if rec is None or rec.first_wrong is None:
        return None
    i = rec.first_wrong
    score = rec.scores[i] if i < len(rec.scores) and rec.scores[i] is not None else None
    why = f"{verifier} judged it wrong" + (f" (score {score:.2f})" if score is not None else "")
    return FirstWrong(round=trace.final.index, step=i, reason=why)
