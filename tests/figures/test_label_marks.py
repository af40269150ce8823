"""Labelled steps on the reasoning map and in the outline: one glyph per labelled step, at that
step, in the verdict's colour (green correct, red wrong)."""

from __future__ import annotations

from o3viz.analysis.outline import build_outline
from o3viz.figures import label_rows, mark_labels, outline_items, reasoning_map_figure
from o3viz.figures._style import BAD_COLOR, GOOD_COLOR
from o3viz.testing.synthetic import make_trace


def test_each_labelled_step_gets_its_glyph_above_it_in_its_colour():
    outline = build_outline(make_trace(8, seed=1))
    fig = reasoning_map_figure(outline)
    step = next(t for t in fig.data if t.customdata is not None and "step:0:2" in list(t.customdata))
    x = list(step.x)[list(step.customdata).index("step:0:2")]
    before = len(fig.data)
    mark_labels(fig, {"step:0:2": "wrong", "step:0:5": "correct", "step:9:9": "wrong"})
    added = fig.data[before:]
    assert [t.name for t in added] == ["labelled correct", "labelled wrong"]
    wrong = added[1]
    assert list(wrong.text) == ["✗"] and list(wrong.x) == [x] and wrong.textfont.color == BAD_COLOR
    assert added[0].textfont.color == GOOD_COLOR  # a step the map lacks (step:9:9) gets nothing


def test_the_outline_row_of_a_labelled_step_says_so():
    rows = outline_items(build_outline(make_trace(6, seed=2)))
    marked = label_rows(rows, {"step:0:1": "unsure"})
    (row,) = [r for r in marked if r["id"] == "step:0:1"]
    assert row["chip"].endswith("labelled ?")
    assert [r for r in marked if r["id"] != "step:0:1"] == [r for r in rows if r["id"] != "step:0:1"]
