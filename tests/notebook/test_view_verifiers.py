"""The standalone / notebook view's data lists every verifier's verdict on a step (issue 42):
``trace_view_data(...)["nodes"][step]["checks"]`` holds the step's checks, then one row per
verifier the round holds (its name and kind, ok / wrong / unsure / not judged, its score), in the
verdict colours, so the client-side details panel shows what Inspect's server panel shows."""

from __future__ import annotations

from dataclasses import dataclass, field

from o3viz.figures._style import VERDICT_COLORS
from o3viz.importers import import_trace
from o3viz.notebook.data import trace_view_data
from o3viz.trace.verdicts import VerdictRecord
from o3viz.verify.verifiers import Judgement, Solution, add_verdicts, make_verifier

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


def _rows(node: dict) -> dict[str, dict]:
    return {c["verifier"]: c for c in node["checks"] if "verifier" in c}


def test_every_verifiers_verdict_is_a_row_of_the_steps_checks():
    trace = import_trace(TEXT)  # with the built-in claim checks
    add_verdicts(trace, make_verifier("claims"))
    add_verdicts(trace, Scored())
    nodes = trace_view_data(trace)["nodes"]
    step = nodes["step:0:2"]  # 4 * 3 = 13
    assert [c for c in step["checks"] if "verifier" not in c]  # the built-in checks are still there, first
    rows = _rows(step)
    assert list(rows) == ["claims", "scored"]
    assert rows["claims"]["name"] == "claims · claim checker" and rows["claims"]["verdict"] == "wrong"
    assert rows["claims"]["color"] == VERDICT_COLORS["fail"] and rows["claims"]["message"] == ""
    assert rows["scored"]["verdict"] == "ok" and rows["scored"]["message"] == "score 0.80"
    assert rows["scored"]["color"] == VERDICT_COLORS["pass"]
    last = _rows(nodes[f"step:0:{trace.final.steps[-1].index}"])
    assert last["scored"]["verdict"] == "wrong" and last["scored"]["message"] == "score 0.10"


def test_a_step_a_verifier_did_not_judge_says_so_and_a_trace_without_verifiers_is_unchanged():
    trace = import_trace(TEXT, claims=False)
    plain = trace_view_data(trace)["nodes"]
    assert all(not _rows(n) for k, n in plain.items() if k.startswith("step:"))
    n = len(trace.final.steps)
    trace.final.verdicts.append(VerdictRecord("sparse", ["unsure"] + [None] * (n - 1)))
    nodes = trace_view_data(trace)["nodes"]
    assert _rows(nodes["step:0:0"])["sparse"]["verdict"] == "unsure"
    assert _rows(nodes["step:0:0"])["sparse"]["color"] == VERDICT_COLORS["unverifiable"]
    assert _rows(nodes["step:0:1"])["sparse"]["verdict"] == "not judged"
