"""Branch figures: forks leave their steps on the reasoning map with the branch's answer and
verdict at the end; the answers of resampled continuations stack against the trace's own."""

from __future__ import annotations

from o3viz.analysis.outline import build_outline
from o3viz.figures import Fork, branch_answers_figure, reasoning_map_figure
from o3viz.figures._style import VERDICT_COLORS
from o3viz.figures.map_layout import fork_ends, map_layout
from o3viz.testing.builders import small_trace


def test_each_fork_is_a_lane_from_its_step_ending_in_its_answer_and_verdict():
    outline = build_outline(small_trace())
    forks = [
        Fork("step:0:1", "edit", "So 5.", "5", "pass"),
        Fork("step:0:1", "resample", "3 rollouts", "6", "fail"),
    ]
    fig = reasoning_map_figure(outline, forks=forks)
    ends = next(t for t in fig.data if t.meta == "fork-ends")
    assert list(ends.customdata) == ["step:0:1", "step:0:1"]
    assert list(ends.marker.color) == [VERDICT_COLORS["pass"], VERDICT_COLORS["fail"]]
    assert "5" in ends.text[0] and "6" in ends.text[1]
    lay = map_layout(outline)
    (_, x0, y0, x1, y1), (_, _, _, _, y2) = fork_ends(lay, forks)
    assert (x0, y0) == lay.pos["step:0:1"] and x1 > x0 and y2 > y1 > y0  # fanned out, not on top


def test_a_fork_of_a_step_the_map_lacks_is_left_out():
    fig = reasoning_map_figure(build_outline(small_trace()), forks=[Fork("step:9:9", "edit")])
    assert not any(t.meta == "fork-ends" for t in fig.data)


def test_resampled_answers_stack_against_the_trace_s_own_with_n():
    fig = branch_answers_figure("0:2", "102", {"84": 3, "102": 1}, reference="84")
    assert list(fig.data[0].y) == ["as written (n = 1)", "resampled (n = 4)"]
    assert list(fig.data[0].x) == [0.0, 0.75] and fig.data[0].marker.color == VERDICT_COLORS["pass"]
    assert "step 0:2" in fig.layout.title.text
