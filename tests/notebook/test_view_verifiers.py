"""The standalone / notebook view's data lists every verifier's verdict on a step (issue 42):
``trace_view_data(...)["nodes"][step]`` holds the step's checks, then one reference per verifier
the round holds into the view's table of verifiers (issue 52: each name once, not once per step),
which the page's script turns into rows (its name and kind, ok / wrong / unsure / not judged, its
score) in the verdict colours, as ``o3viz.view.verifier_rows`` does here, so the client-side
details panel shows what Inspect's server panel shows."""

from __future__ import annotations

from dataclasses import dataclass, field

from o3viz.figures import VERDICT_COLORS
from o3viz.importers import import_trace
from o3viz.notebook.data import trace_view_data
from o3viz.trace.verdicts import VerdictRecord
from o3viz.verify.verifiers import Judgement, Solution, add_verdicts, make_verifier
from o3viz.view import verifier_rows

TEXT = (
    "<think>\nWe need x.\nx = 2 + 3 = 5.\nThen y = 4 * 3 = 13.\nSo x + y = 18.\n</think>\nThe answer is 18."
)


@dataclass
class Scored:
    """A second verifier on the one interface: every step ok with score 0.8, the last one wrong."""

    name: str = "scored"
    provenance: dict = field(default_factory=lambda: {"kind": "toy"})

    def verify(self, sol: Solution) -> Judgement:
        n = len(sol.steps)
        return Judgement(["ok"] * (n - 1) + ["wrong"], [0.8] * (n - 1) + [0.1])


def _rows(data: dict, node: str) -> dict[str, dict]:
    return {c["verifier"]: c for c in verifier_rows(data, node)}


def test_every_verifiers_verdict_is_a_row_of_the_steps_checks():
    trace = import_trace(TEXT)  # with the built-in claim checks
    add_verdicts(trace, make_verifier("claims"))
    add_verdicts(trace, Scored())
    data = trace_view_data(trace)
    step = data["nodes"]["step:0:2"]  # 4 * 3 = 13
    assert step["checks"] and not any("verifier" in c for c in step["checks"])  # the built-in checks
    assert [v["verifier"] for v in data["verifiers"]] == ["claims", "scored"]  # each named once
    rows = _rows(data, "step:0:2")
    assert list(rows) == ["claims", "scored"]
    assert rows["claims"]["name"] == "claims · claim checker" and rows["claims"]["verdict"] == "wrong"
    assert rows["claims"]["color"] == VERDICT_COLORS["fail"] and rows["claims"]["message"] == ""
    assert rows["scored"]["verdict"] == "ok" and rows["scored"]["message"] == "score 0.80"
    assert rows["scored"]["color"] == VERDICT_COLORS["pass"]
    last = _rows(data, f"step:0:{trace.final.steps[-1].index}")
    assert last["scored"]["verdict"] == "wrong" and last["scored"]["message"] == "score 0.10"


def test_a_step_a_verifier_did_not_judge_says_so_and_a_trace_without_verifiers_is_unchanged():
    trace = import_trace(TEXT, claims=False)
    plain = trace_view_data(trace)
    assert "verifiers" not in plain and not any("verdicts" in n for n in plain["nodes"].values())
    n = len(trace.final.steps)
    trace.final.verdicts.append(VerdictRecord("sparse", ["unsure"] + [None] * (n - 1)))
    data = trace_view_data(trace)
    assert _rows(data, "step:0:0")["sparse"]["verdict"] == "unsure"
    assert _rows(data, "step:0:0")["sparse"]["color"] == VERDICT_COLORS["unverifiable"]
    assert _rows(data, "step:0:1")["sparse"]["verdict"] == "not judged"
