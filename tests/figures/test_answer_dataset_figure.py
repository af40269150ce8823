"""The Dataset page's running-answer figures (issue 53): a bar per dataset and model with its
interval and n, hollow under 5 traces, its selection in ``customdata`` for the drill-down, and the
published figure beside it, named as the paper's."""

from __future__ import annotations

import json
import re

import pytest

from o3viz.figures._style import GOOD_COLOR
from o3viz.figures.answer_dataset import MEASURES, answer_dataset_figure

ROWS = [
    {
        "group": "math500 · DeepSeek-R1",
        "value": 0.7,
        "lo": 0.55,
        "hi": 0.82,
        "n": 20,
        "sel": json.dumps({"model": "r1"}),
    },
    {
        "group": "math500 · Qwen-7B",
        "value": 0.5,
        "lo": 0.1,
        "hi": 0.9,
        "n": 3,
        "sel": json.dumps({"model": "q"}),
    },
]


@pytest.mark.parametrize("measure", list(MEASURES))
def test_each_bar_has_its_interval_n_and_selection_and_the_paper_is_named(measure):
    fig = answer_dataset_figure(measure, ROWS)
    bar = fig.data[0]
    assert list(bar.x) == [0.7, 0.5] and list(bar.text) == ["n = 20", "n = 3"]
    assert [round(v, 2) for v in bar.error_x.array] == [0.12, 0.4]
    assert [round(v, 2) for v in bar.error_x.arrayminus] == [0.15, 0.4]
    assert [json.loads(s)["model"] for s in bar.customdata] == ["r1", "q"]
    assert bar.marker.color == (GOOD_COLOR, "rgba(0,0,0,0)")  # 3 traces: hollow
    label = MEASURES[measure][2].label
    assert any(a.text == label for a in fig.layout.annotations)
    assert "arXiv" in label or "fragile" in label


def test_a_range_from_a_paper_is_a_band_and_an_empty_scope_says_why():
    fig = answer_dataset_figure("tokens_saved", ROWS)
    band = [s for s in fig.layout.shapes if s.type == "rect"]
    assert band and (band[0].x0, band[0].x1) == (0.19, 0.8)
    empty = answer_dataset_figure("flip_rate", [])
    assert "No graded trace" in empty.layout.annotations[0].text


@pytest.mark.parametrize("measure", ["flip_rate", "convergence"])
def test_the_figures_that_count_changes_of_answer_state_the_reading_rule(measure):
    # issue 63 finding 1: a right answer "lost" to an intermediate result is not a loss; the page says
    # which answers count
    from o3viz.figures.answer_dataset import READ_WITH_CONFIDENCE

    fig = answer_dataset_figure(measure, [{"group": "d · m", "value": 0.2, "lo": 0.1, "hi": 0.3, "n": 20}])
    assert "read with confidence" in fig.layout.xaxis.title.text
    assert READ_WITH_CONFIDENCE.split(":")[0].replace("an answer", "answers") in fig.layout.title.text
    lines = re.sub(r"<(?!br>)[^>]*>", "", fig.layout.title.text).split("<br>")[1:]  # the text, no tags
    longest = max(len(line) for line in lines)
    assert longest <= 100  # a half-width figure's subtitle line, not cut at its right edge
    other = answer_dataset_figure("early_correct", [{"group": "d · m", "value": 0.2, "n": 20}])
    assert "read with confidence" not in other.layout.title.text
