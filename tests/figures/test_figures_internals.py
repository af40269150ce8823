"""Routing and logit-lens figures build from trace records, mark what they claim to mark, say
when there is nothing to draw, and label random-weight routing as such."""

from __future__ import annotations

import numpy as np

from o3viz.figures import (
    answer_depth_summary,
    coactivation_figure,
    expert_load_figure,
    lens_grid_figure,
    routing_diff_figure,
    routing_entropy_figure,
    routing_heatmap,
    step_routing_figure,
    token_routing_rows,
)
from o3viz.testing.internals import trace_with_internals


def test_heatmap_marks_exactly_the_chosen_experts_and_labels_random_weights():
    t = trace_with_internals()
    rec = t.final.internals.routing
    fig = routing_heatmap(rec, t.final, 1)
    marks = fig.data[1]
    assert len(marks.x) == rec.num_generated * rec.top_k
    assert sorted(zip(marks.x, marks.y, strict=True)) == sorted(
        (g, int(e)) for g in range(rec.num_generated) for e in rec.experts[g, 1]
    )
    assert "RANDOM weights" in fig.layout.title.text


def test_every_routing_figure_builds_and_load_titles_carry_cv_and_balance():
    t = trace_with_internals()
    rec, rnd = t.final.internals.routing, t.final
    load = expert_load_figure(rec)
    assert all("CV" in y and "bal" in y for y in load.data[0].y)
    for fig in (routing_entropy_figure(rec, rnd), coactivation_figure(rec, 0), step_routing_figure(rec, rnd)):
        assert fig.data and fig.layout.title.text
    rows = token_routing_rows(rec, 0)
    assert len(rows) == len(rec.layers) and rows[0]["chosen experts (weight)"]  # random weights are not all 1


def test_diff_figure_uses_one_symmetric_scale():
    a = trace_with_internals(0).final.internals.routing
    b = trace_with_internals(1).final.internals.routing
    fig = routing_diff_figure(a, b)
    assert fig.data[0].zmin == -fig.data[0].zmax
    assert np.isclose(np.abs(np.array(fig.data[0].z)).max(), fig.data[0].zmax)


def test_lens_grid_shows_top1_text_and_boxes_the_answer_at_its_first_layer():
    t = trace_with_internals()
    lens, rnd = t.final.internals.lens, t.final
    fig = lens_grid_figure(lens, rnd)
    assert fig.data[0].text[1][0] == rnd.tokens[0].text == "17*2"  # last layer predicts the token
    assert fig.data[0].text[0][0] == "t99"  # layer 1's top-1 was something else
    assert "rank" in fig.data[0].customdata[0][0]
    boxes = fig.data[1]
    assert list(boxes.y) == ["layer 3"] and len(boxes.x) == 1  # the answer token, at the last layer
    assert "layer 3" in answer_depth_summary(lens, rnd)


def test_empty_windows_say_so():
    t = trace_with_internals()
    rec = t.final.internals.routing
    fig = routing_heatmap(rec, t.final, 0, g0=99)
    assert "No generated tokens" in fig.layout.annotations[0].text
