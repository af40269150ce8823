"""Compare's maps: the divergence label sits in the margin above the plot, never on a node (issue 22,
finding 9), and long traces are drawn as two episode overviews on one step range (issue 24)."""

from __future__ import annotations

import pytest

from o3viz.analysis.compare import compare_traces
from o3viz.analysis.outline import build_outline
from o3viz.figures.compare import compare_maps
from o3viz.figures.episode_map import count_marks
from o3viz.testing.synthetic import make_trace


def _labels(fig):
    return [ann for ann in fig.layout.annotations if "first divergence" in (ann.text or "")]


def test_the_divergence_label_sits_above_the_plot_and_no_label_covers_a_node_on_short_maps():
    a, b = make_trace(10, seed=7), make_trace(10, seed=7)
    b.final.steps = b.final.steps[:4] + b.final.steps[6:]
    comp = compare_traces(a, b)
    for tag, fig in zip("AB", compare_maps(comp, build_outline(a), build_outline(b)), strict=True):
        (label,) = _labels(fig)
        assert label.yref == "paper" and label.y >= 1.0 and label.ay < 0  # text above the plot area
        assert f"{tag} " in label.text
        on_nodes = [ann for ann in fig.layout.annotations if ann.yref in (None, "y")]
        assert not on_nodes, "an annotation is placed on the nodes"
        assert any(t.name == "first divergence" for t in fig.data) or tag == "B"  # B has no step there


@pytest.fixture(scope="module")
def long_pair():
    from o3viz.testing.long_r1 import R1_FILE

    if not R1_FILE.exists():
        pytest.skip("../shared/data is absent")
    from o3viz.testing.compare_pair import planted_pair

    return planted_pair(2000)


def test_two_long_traces_are_drawn_as_episode_overviews_on_one_range_with_the_divergence_marked(long_pair):
    a, b, at = long_pair
    comp = compare_traces(a, b)
    fa, fb = compare_maps(comp, build_outline(a), build_outline(b))
    assert list(fa.layout.xaxis.range) == list(fb.layout.xaxis.range)
    for fig in (fa, fb):
        assert any(t.name == "episode" for t in fig.data) and count_marks(fig) <= 300
        (label,) = _labels(fig)
        assert f"step {at}" in label.text and label.yref == "paper" and label.y >= 1.0
        line = next(s for s in fig.layout.shapes if s.type == "line")
        assert abs(line.x0 - at) < 1.0  # the planted step's place on the overview
