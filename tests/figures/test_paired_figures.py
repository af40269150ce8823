"""The paired comparison's figures and notebook view: the marks carry the numbers of the result (the
accuracies, the difference and its interval, each measure's change), an empty result says why, and
``o3viz.show`` on two datasets of the store is one self-contained page with the same numbers."""

from __future__ import annotations

import pandas as pd
import pytest

import o3viz
from o3viz.analysis.paired import ROW_COLUMNS, PairedCompareRequest, Side, paired_compare
from o3viz.figures.paired import paired_accuracy_figure, paired_measures_figure
from o3viz.notebook.paired import paired_html


def _row(key, question, correct, steps, backtracks=0):
    row = dict.fromkeys(ROW_COLUMNS, 0)
    row.update(key=key, name=key, dataset="d", model="m", question=question, record=None, importance=None)
    row.update(correct=correct, source_correct=correct, check_correct=None, first_wrong_pos=None, answer="7")
    row.update(steps=steps, backtracks=backtracks, t_active_computation=steps, part="")
    return row


def _result(n=40):
    a = pd.DataFrame([_row(f"a{i}", f"q{i}", int(i % 3 == 0), 4, 1) for i in range(n)])
    b = pd.DataFrame([_row(f"b{i}", f"q{i}", int(i % 2 == 0), 6 + i % 2, 2) for i in range(n)])
    return paired_compare(a, b, PairedCompareRequest(Side("A"), Side("B")))


def test_accuracy_figure_carries_the_numbers():
    r = _result()
    fig = paired_accuracy_figure(r)
    xs = {tr.y[0]: tr.x[0] for tr in fig.data}
    assert xs["accuracy A"] == pytest.approx(100 * r.acc_a)
    assert xs["accuracy B"] == pytest.approx(100 * r.acc_b)
    d, lo, hi = r.diff
    diff = next(tr for tr in fig.data if tr.y[0] == "B − A")
    assert diff.x[0] == pytest.approx(100 * d)
    assert diff.error_x.array[0] == pytest.approx(100 * (hi - d))
    assert f"n = {r.graded}" in fig.layout.title.text


def test_measures_figure_counts_relative_shares_in_points():
    r = _result()
    fig = paired_measures_figure(r)
    counts = next(tr for tr in fig.data if tr.xaxis == "x" and tr.name == "measures")
    shares = [y for tr in fig.data if tr.xaxis == "x2" for y in tr.y]
    steps = list(counts.y).index("steps (n = 40)")
    assert counts.x[steps] == pytest.approx(100 * 2.5 / 4)  # +2.5 steps on A's 4: +62.5% of A
    backtracks = list(counts.y).index("backtracks (n = 40)")
    assert counts.x[backtracks] == pytest.approx(100.0)
    assert all(s.startswith("share of") for s in shares)


def test_empty_results_say_why():
    a = pd.DataFrame([_row("a", "q", None, 3)])
    b = pd.DataFrame([_row("b", "other", None, 3)])
    r = paired_compare(a, b, PairedCompareRequest(Side("A"), Side("B")))
    assert not paired_accuracy_figure(r).data and not paired_measures_figure(r).data


def test_notebook_view_of_a_result_is_one_page():
    r = _result()
    page = paired_html(r)
    assert "Questions that flipped" in page and "plotly" in page[:2_000_000]
    assert f"{r.table.both}</td>" in page


def test_show_two_datasets_of_the_store(shared_data, tmp_path):
    from o3viz.cli.main import main
    from o3viz.testing.paired import expected, system_files

    src = shared_data / "gsm8k" / "gsm8k_example_model_solutions.jsonl"
    paths = system_files(src, ("175b_finetuning", "175b_verification"), tmp_path, limit=20)
    for path, name in zip(paths, ("ft", "ver"), strict=True):
        assert main(["import", str(path), "--all", "--dataset", name, "--workers", "0"]) == 0
    want = expected(src, "175b_finetuning", "175b_verification", limit=20)
    view = o3viz.show("ft", "ver", grade="source")
    page = view.html()
    assert f"{100 * want['accuracy_a']:.1f}%" in page and f"{100 * want['accuracy_b']:.1f}%" in page
    assert f"Questions that flipped ({want['a_only'] + want['b_only']})" in page
    assert "<iframe" in view._repr_html_()


def test_thin_measures_are_drawn_hollow_and_say_so():
    """A measure resting on one event (self-checks) or on 4 pairs (first wrong step) is drawn
    hollow in the faded colour with "thin" in its label; steps over 40 pairs stay solid with n."""
    a = pd.DataFrame([_row(f"a{i}", f"q{i}", 1, 4) | {"self_checks": int(i == 0), "first_wrong_pos": 0.5 if i < 4 else None}
                      for i in range(40)])  # fmt: skip
    b = pd.DataFrame(
        [_row(f"b{i}", f"q{i}", 1, 6) | {"first_wrong_pos": 0.2 if i < 4 else None} for i in range(40)]
    )
    fig = paired_measures_figure(paired_compare(a, b, PairedCompareRequest(Side("A"), Side("B"))))
    solid = [y for tr in fig.data if tr.name == "measures" for y in tr.y]
    thin = [tr for tr in fig.data if tr.name == "thin"]
    assert "steps (n = 40)" in solid
    assert all(tr.marker.symbol == "circle-open" and tr.marker.color == "#9ca3af" for tr in thin)
    labels = [y for tr in thin for y in tr.y]
    assert "self-checks (thin: 1 event)" in labels
    assert "first wrong step (0 = first, 1 = last) (thin: n = 4)" in labels
    assert not any("thin" in y for y in solid)
