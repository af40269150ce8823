"""The running-answer lane (issue 53): built from a trace with no model (stated answers) and with a
forced-answer record, drawn under the reasoning map, the episode overview and Compare's two maps on
their x axis; the first-right mark sits at the step the per-trace figures name; right, wrong and
ungraded keep the palette's colours; a probe by another model says so."""

from __future__ import annotations

import pytest

from o3viz.analysis.answer_figures import trace_answer_figures
from o3viz.analysis.compare import compare_traces
from o3viz.analysis.episodes import find_episodes
from o3viz.analysis.outline import build_outline
from o3viz.figures._style import BAD_COLOR, GOOD_COLOR, UNGRADED_COLOR
from o3viz.figures.answer_lane import lane_marks, lane_of
from o3viz.figures.compare import compare_maps
from o3viz.figures.episode_map import episode_map_figure
from o3viz.figures.map_answers import LANE_PX
from o3viz.figures.map_layout import map_layout
from o3viz.figures.reasoning_map import reasoning_map_figure
from o3viz.trace import Round, Step, Task, Trace
from o3viz.trace.answers import AnswerRecord

TEXTS = [
    "Let me add.",
    "So x = 4.",
    "Hmm, maybe not.",
    "So x = 5 instead.",
    "Check it.",
    "So the answer is 4.",
]


def _trace(reference: str | None = "4", texts=TEXTS, forced: AnswerRecord | None = None) -> Trace:
    steps, at = [], 0
    for i, t in enumerate(texts):
        steps.append(Step(index=i, start=at, end=at + len(t), text=t))
        at += len(t) + 1
    rnd = Round(text=" ".join(texts), steps=steps, answer="4")
    if forced is not None:
        rnd.answers.append(forced)
    return Trace(Task("What is x?", reference=reference), [rnd])


def _forced(n: int, other_model: bool = True) -> AnswerRecord:
    answers = ["3", "4", "4", "5", "4", "4"][:n]
    return AnswerRecord(
        "forced:local:SmolLM2-135M-Instruct",
        "forced",
        answers=answers,
        positions=[None] * n,
        correct=[a == "4" for a in answers],
        p_reference=[0.1, 0.6, 0.5, 0.2, 0.7, 0.9][:n],
        info={"model": "HuggingFaceTB/SmolLM2-135M-Instruct", "other_model": other_model},
    )


def _meta(fig, meta: str):
    return [t for t in fig.data if t.meta == meta]


def test_without_a_lane_the_map_is_as_before():
    o = build_outline(_trace())
    for fig in (reasoning_map_figure(o), episode_map_figure(o, find_episodes(o, 2))):
        assert not [t for t in fig.data if str(t.meta or "").startswith("answer-lane")]
        assert "yaxis2" not in fig.to_dict()["layout"] and fig.layout.yaxis.domain is None
        assert fig.layout.xaxis.anchor is None


def test_the_first_right_mark_sits_at_the_step_the_figures_name_on_the_maps_x_axis():
    t = _trace()
    lane, o = lane_of(t), build_outline(t)
    first = trace_answer_figures(t).first_correct_step
    assert first == "step:0:1" and lane.mark("first_correct").step == first
    for fig in (
        reasoning_map_figure(o, answer_lane=lane),
        episode_map_figure(o, find_episodes(o, 2), answer_lane=lane),
    ):
        (mark,) = _meta(fig, "answer-lane:first_correct")
        assert list(mark.customdata) == [first]
        assert mark.x[0] == map_layout(o).pos[first][0]  # under its step
        assert mark.yaxis == "y2" and fig.layout.xaxis.anchor == "y2"  # its own row, the map's x axis
        assert "first right · step 1" in mark.text[0]  # and as a label above the row (see below)
    kinds = [m.kind for m in lane.marks]
    assert kinds == ["first_correct", "loss", "regain", "final"]


def test_right_wrong_and_ungraded_keep_the_palette():
    fig = reasoning_map_figure(build_outline(_trace()), answer_lane=lane_of(_trace()))
    assert _meta(fig, "answer-lane:stated:right")[0].marker.color == GOOD_COLOR
    assert _meta(fig, "answer-lane:stated:wrong")[0].marker.color == BAD_COLOR
    ungraded = lane_of(_trace(reference=None))
    assert ungraded.points and all(p.stated_correct is None for p in ungraded.points)
    assert not [
        m for m in ungraded.marks if m.kind != "final"
    ]  # nothing is right or lost without a reference
    fig = reasoning_map_figure(build_outline(_trace(reference=None)), answer_lane=ungraded)
    (pts,) = _meta(fig, "answer-lane:stated:ungraded")
    assert pts.marker.color == UNGRADED_COLOR and "ungraded (no reference)" in pts.hovertext[0]


def test_forced_answers_name_their_model_and_the_probability_has_its_own_axis():
    t = _trace(forced=_forced(len(TEXTS)))
    lane = lane_of(t)
    assert lane.forced_by == "SmolLM2-135M-Instruct" and lane.other_model
    fig = reasoning_map_figure(build_outline(t), answer_lane=lane)
    (wrong,) = _meta(fig, "answer-lane:forced:wrong")
    assert "forced after step 0 by SmolLM2-135M-Instruct (not the trace's model)" in wrong.hovertext[0]
    (p,) = _meta(fig, "answer-lane:p-reference")
    assert p.yaxis == "y3" and list(p.y) == [0.1, 0.6, 0.5, 0.2, 0.7, 0.9]
    assert tuple(fig.layout.yaxis3.range) == (-0.05, 1.05) and fig.layout.yaxis3.overlaying == "y2"
    assert "not the trace's model" in fig.layout.annotations[-1].text
    # the forced answer is the running answer where probed: first right at step 1, lost at 3
    assert [(m.kind, m.step) for m in lane.marks][:3] == [
        ("first_correct", "step:0:1"),
        ("loss", "step:0:3"),
        ("regain", "step:0:4"),
    ]
    assert lane.mark("first_correct").step == trace_answer_figures(t).first_correct_step


def test_a_map_grows_by_the_lane_unless_its_height_is_given():
    o, lane = build_outline(_trace()), lane_of(_trace())
    assert (
        reasoning_map_figure(o, answer_lane=lane).layout.height
        == reasoning_map_figure(o).layout.height + LANE_PX
    )
    assert reasoning_map_figure(o, answer_lane=lane, height=410).layout.height == 410


def test_compare_draws_both_lanes_on_one_scale():
    a, b = _trace(), _trace(texts=[*TEXTS[:3], "So x = 7.", "So the answer is 4."])
    comp = compare_traces(a, b)
    fa, fb = compare_maps(comp, build_outline(a), build_outline(b), answer_lanes=(lane_of(a), lane_of(b)))
    assert fa.layout.xaxis.range == fb.layout.xaxis.range and fa.layout.height == fb.layout.height
    assert fa.layout.yaxis2.range == fb.layout.yaxis2.range
    for fig in (fa, fb):
        assert _meta(fig, "answer-lane:first_correct")


def test_a_trace_without_steps_has_no_lane_and_marks_count_graded_steps_only():
    assert lane_of(Trace(Task("q"), [Round(text="")])) is None
    series = [("a", "4", True), ("b", None, None), ("c", "5", False), ("d", None, None)]
    assert [(m.kind, m.step) for m in lane_marks(series)] == [("first_correct", "a"), ("loss", "c")]


@pytest.mark.parametrize("n", [2, 40])
def test_every_imported_trace_has_a_lane(n):
    from o3viz.importers import import_trace

    text = (
        "<think>"
        + " ".join(["Let me compute 3 + 4 = 7.", "So the total is 12."] * n)
        + "</think> \\boxed{12}"
    )
    t = import_trace(text.encode())
    lane = lane_of(t)
    assert lane is not None and lane.points and all(p.stated == "12" for p in lane.points)


def test_an_overview_of_thousands_of_steps_draws_a_bounded_lane():
    from o3viz.figures.answer_lane import OVERVIEW_POINTS
    from o3viz.testing.long_r1 import long_r1_trace

    t = long_r1_trace(5000)
    o, lane = build_outline(t), lane_of(t)
    assert len(lane.points) > 2 * OVERVIEW_POINTS  # many stated answers …
    fig = episode_map_figure(o, find_episodes(o), answer_lane=lane)
    drawn = sum(len(tr.x) for tr in fig.data if str(tr.meta or "").startswith("answer-lane:stated"))
    assert 0 < drawn <= OVERVIEW_POINTS  # … drawn where they turn, at most OVERVIEW_POINTS


def _label_and_legend(fig):
    (label,) = [a for a in fig.layout.annotations if a.name == "answer-lane:first-right-label"]
    legend = next(a for a in fig.layout.annotations if "Running answer" in (a.text or ""))
    return label, legend


def test_the_legend_fits_and_the_first_right_label_touches_no_mark():
    # issue 63 item 9: one legend line ran past the right edge at 1280 px; the label sat on the
    # marks' row, beside the next mark
    from o3viz.figures.map_answers import LABEL_SHIFT_PX, LEGEND_LINE_CHARS, MARKS_Y, _visible

    t = _trace(forced=_forced(6))
    o = build_outline(t)
    for fig in (
        reasoning_map_figure(o, answer_lane=lane_of(t)),
        episode_map_figure(o, find_episodes(o, 2), answer_lane=lane_of(t)),
    ):
        label, legend = _label_and_legend(fig)
        lines = legend.text.split("<br>")
        assert len(lines) >= 2 and all(len(_visible(line)) <= LEGEND_LINE_CHARS for line in lines)
        assert "forced by SmolLM2-135M-Instruct (not the trace's model)" in _visible(legend.text)
        assert fig.layout.yaxis.domain[0] >= fig.layout.yaxis2.domain[1] + 0.07 + 0.03 * (len(lines) - 1)
        marks = [d for d in fig.data if str(d.meta or "").startswith("answer-lane:") and d.yaxis == "y2"]
        biggest = max(d.marker.size for d in marks if d.y is not None and d.y[0] == MARKS_Y)
        # the label's lower edge (11 px type around its centre) clears the largest mark's top
        assert label.y == MARKS_Y and label.yshift == LABEL_SHIFT_PX and LABEL_SHIFT_PX - 6 > biggest / 2
        assert label.text == "first right · step 1" and label.xanchor in ("left", "right")
        top = min(fig.layout.yaxis2.range)  # a reversed axis: its top is its smaller end
        assert MARKS_Y - top >= 0.9  # room above the marks' row for the label


def test_a_turn_that_rests_on_an_uncertain_reading_is_drawn_faint_and_says_so():
    texts = ["So x = 4.", "That's 5.", "So the answer is 4."]  # "That's 5" says nothing of x
    t = _trace(texts=texts)
    lane = lane_of(t)
    assert [(m.kind, m.uncertain) for m in lane.marks] == [
        ("first_correct", False),
        ("loss", True),
        ("regain", True),
        ("final", False),
    ]
    assert "uncertain reading" in lane.points[1].stated_source
    fig = reasoning_map_figure(build_outline(t), answer_lane=lane)
    (loss,) = _meta(fig, "answer-lane:loss")
    assert list(loss.marker.opacity) == [0.35] and "uncertain reading" in loss.hovertext[0]
    assert trace_answer_figures(t).flips_right_to_wrong == 0
