"""The map's checks lane takes any verifier (issue 42): with ``verdicts=`` (the verifier Inspect's
"First wrong step by" switch picked) the lane draws that verifier's ok / wrong / unsure marks under
the steps it judged, names it in the hover and in the lane's tick; without, it draws the checks as
before. The same for the episode overview of a long trace."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from o3viz.analysis.episodes import find_episodes
from o3viz.analysis.outline import build_outline
from o3viz.analysis.verdicts import lane_verdicts
from o3viz.figures import episode_map_figure
from o3viz.figures._style import VERDICT_COLORS
from o3viz.figures.map_layout import CHECKS, map_layout
from o3viz.figures.reasoning_map import reasoning_map_figure
from o3viz.importers import import_trace
from o3viz.trace.verdicts import VerdictRecord
from o3viz.verify.verifiers import Judgement, Solution, add_verdicts, make_verifier

TEXT = (
    "<think>\nWe need x.\nx = 2 + 3 = 5.\nThen y = 4 * 3 = 13.\nSo x + y = 18.\n</think>\nThe answer is 18."
)


@dataclass
class EveryOther:
    """A second real verifier on the one interface: even steps ok, odd steps wrong, with a score."""

    name: str = "every_other"
    provenance: dict = field(default_factory=lambda: {"kind": "toy"})

    def verify(self, sol: Solution) -> Judgement:
        verdicts = ["ok" if i % 2 == 0 else "wrong" for i in range(len(sol.steps))]
        return Judgement(verdicts, [0.9 if v == "ok" else 0.1 for v in verdicts])


@pytest.fixture
def trace():
    t = import_trace(TEXT, claims=False)
    add_verdicts(t, make_verifier("claims"))  # step 1 ok (2+3=5), step 2 wrong (4*3=13), others unsure
    add_verdicts(t, EveryOther())
    return t


def _lane_marks(fig, verifier: str) -> dict[str, tuple[str, float, float]]:
    """{step id: (mark name, x, y)} of ``verifier``'s marks."""
    out = {}
    for tr in fig.data:
        if tr.meta == f"verdicts:{verifier}":
            for sid, x, y in zip(tr.customdata, tr.x, tr.y, strict=True):
                out[sid] = (tr.name, float(x), float(y))
    return out


def test_without_a_verifier_the_lane_draws_the_checks_as_before(trace):
    trace.final.checks.clear()
    from o3viz.trace import Check

    trace.final.checks.append(Check("claim", "4*3 = 13", "wrong", step=2))
    outline = build_outline(trace)
    fig = reasoning_map_figure(outline)
    assert not [t for t in fig.data if str(t.meta or "").startswith("verdicts:")]
    (failed,) = [t for t in fig.data if t.name == "check failed"]
    assert list(failed.customdata) == ["check:0:0"]
    assert fig.layout.yaxis.ticktext[map_layout(outline).lanes.index(CHECKS)].endswith(" checks")


def test_the_chosen_verifiers_verdicts_fill_the_lane_under_the_steps_it_judged(trace):
    outline = build_outline(trace)
    lay = map_layout(outline)
    row = float(lay.lanes.index(CHECKS))
    fig = reasoning_map_figure(outline, verdicts=lane_verdicts(trace, "claims"))
    marks = _lane_marks(fig, "claims")
    said = trace.final.verdicts[0].verdicts
    assert marks == {
        f"step:0:{i}": (f"claims: {v}", lay.pos[f"step:0:{i}"][0], row) for i, v in enumerate(said) if v
    }
    assert marks["step:0:2"][0] == "claims: wrong" and marks["step:0:1"][0] == "claims: ok"
    wrong = next(t for t in fig.data if t.name == "claims: wrong")
    assert wrong.marker.symbol == "x" and wrong.marker.color == VERDICT_COLORS["fail"]
    assert "claims" in wrong.hovertext[0] and "wrong" in wrong.hovertext[0]
    assert fig.layout.yaxis.ticktext[lay.lanes.index(CHECKS)].endswith("checks: claims")
    assert not [t for t in fig.data if t.name and t.name.startswith("check ")]  # the lane says one thing
    assert "■ ok ✗ wrong ○ unsure by claims" in fig.layout.title.text


def test_switching_the_verifier_moves_the_marks(trace):
    outline = build_outline(trace)
    a = _lane_marks(reasoning_map_figure(outline, verdicts=lane_verdicts(trace, "claims")), "claims")
    fig = reasoning_map_figure(outline, verdicts=lane_verdicts(trace, "every_other"))
    b = _lane_marks(fig, "every_other")
    assert {k: v[0].split(": ")[1] for k, v in a.items()} != {k: v[0].split(": ")[1] for k, v in b.items()}
    assert b["step:0:1"][0] == "every_other: wrong" and b["step:0:0"][0] == "every_other: ok"
    ok = next(t for t in fig.data if t.name == "every_other: ok")
    assert "score 0.90" in ok.hovertext[0] and "every_other (toy)" in ok.hovertext[0]


def test_a_verifier_the_trace_does_not_hold_is_no_lane(trace):
    assert lane_verdicts(trace, None) is None
    assert lane_verdicts(trace, "prm:absent") is None


def test_steps_a_verifier_did_not_judge_have_no_mark(trace):
    trace.final.verdicts.append(
        VerdictRecord("sparse", [None, "wrong", None, None, None][: len(trace.final.steps)])
    )
    lane = lane_verdicts(trace, "sparse")
    assert list(lane.steps) == ["step:0:1"]
    fig = reasoning_map_figure(build_outline(trace), verdicts=lane)
    assert list(_lane_marks(fig, "sparse")) == ["step:0:1"]


def test_a_2000_step_trace_draws_the_lane_as_three_traces(shared_data):  # (real R1 sentences)
    from o3viz.testing.long_r1 import long_r1_trace

    trace = long_r1_trace(2000)
    n = len(trace.final.steps)
    said = ["ok", "wrong", "unsure", None]
    trace.final.verdicts.append(VerdictRecord("prm:m", [said[i % 4] for i in range(n)], [0.5] * n))
    fig = reasoning_map_figure(build_outline(trace), verdicts=lane_verdicts(trace, "prm:m"))
    lane = [t for t in fig.data if t.meta == "verdicts:prm:m"]
    assert len(lane) == 3 and sum(len(t.x) for t in lane) == n - n // 4


def test_the_episode_overview_counts_the_chosen_verifiers_verdicts(shared_data):
    from o3viz.testing.long_r1 import long_r1_trace

    trace = long_r1_trace(600)
    n = len(trace.final.steps)
    trace.final.verdicts.append(VerdictRecord("prm:m", ["wrong" if i == n - 3 else "ok" for i in range(n)]))
    outline = build_outline(trace)
    eps = find_episodes(outline)
    fig = episode_map_figure(outline, eps, verdicts=lane_verdicts(trace, "prm:m"))
    marks = {t.name: list(t.customdata) for t in fig.data if t.meta == "verdicts:prm:m"}
    holding = next(e for e in eps if e.lo <= n - 3 < e.hi)
    assert marks["episode: prm:m: a step wrong"] == [holding.id]
    assert len(marks["episode: prm:m: ok"]) == len(eps) - 1
    assert fig.layout.yaxis.ticktext[map_layout(outline).lanes.index(CHECKS)].endswith("checks: prm:m")
    plain = episode_map_figure(outline, eps)
    assert not [t for t in plain.data if str(t.meta or "").startswith("verdicts:")]
