"""The step-level attention heatmap: targets named by their text, sinks left out and rows
renormalised, top targets plus "other", scales that an outlier cannot swamp, the selected step."""

from __future__ import annotations

import numpy as np
import pytest

from o3viz.figures.step_attention import is_sink, step_attention, step_attention_heatmap
from o3viz.testing.synthetic import make_trace


@pytest.fixture(scope="module")
def rnd():
    r = make_trace(30, seed=3).final
    assert any(is_sink(s.label) for s in r.segments)
    return r


def test_targets_are_named_by_their_text_not_their_index(rnd):
    sa = step_attention(rnd, drop_sinks=False, top=100)
    texts = {" ".join(rnd.rendered_prompt[s.start : s.end].split())[:10] for s in rnd.segments}
    assert any(any(t in name for t in texts if t) for name in sa.targets)
    assert not any(name.startswith("seg ") for name in sa.targets)


def test_leaving_out_sinks_drops_them_and_each_step_still_sums_to_one(rnd):
    with_sinks = step_attention(rnd, drop_sinks=False, top=1000)
    without = step_attention(rnd, drop_sinks=True, top=1000)
    assert without.dropped and len(without.targets) < len(with_sinks.targets)
    np.testing.assert_allclose(without.values.sum(axis=0), 1.0, atol=1e-3)


def test_long_prompts_show_the_top_targets_and_group_the_rest_as_other(rnd):
    sa = step_attention(rnd, top=5)
    assert sa.other
    assert any(t.startswith("other") for t in sa.targets)
    assert len(sa.targets) <= 5 + 2
    np.testing.assert_allclose(sa.values.sum(axis=0), 1.0, atol=1e-3)  # nothing lost in grouping
    drill = step_attention(rnd, only=sa.other)
    assert len(drill.targets) == min(len(sa.other), 60)


@pytest.mark.parametrize("scale", ["linear", "log", "quantile"])
def test_every_scale_keeps_the_true_share_in_hover_and_labels_readable(rnd, scale):
    fig = step_attention_heatmap(rnd, scale=scale, selected=2)
    hm = fig.data[0]
    np.testing.assert_allclose(np.asarray(hm.customdata).sum(axis=0), 1.0, atol=1e-3)
    assert fig.layout.xaxis.title.text and fig.layout.yaxis.title.text
    assert fig.layout.xaxis.tickfont.size >= 11 and fig.layout.yaxis.tickfont.size >= 11


def test_the_linear_scale_is_not_swamped_by_one_outlier(rnd):
    fig = step_attention_heatmap(rnd, drop_sinks=False, scale="linear")
    values = np.asarray(fig.data[0].customdata)
    assert fig.data[0].zmax < values.max()


def test_the_selected_step_is_outlined(rnd):
    fig = step_attention_heatmap(rnd, selected=4)
    rects = [s for s in fig.layout.shapes if s.type == "rect"]
    assert rects and {(r.x0, r.x1) for r in rects} == {(3.5, 4.5)}  # one column: step 4 (halo + line)
    assert not step_attention_heatmap(rnd).layout.shapes
