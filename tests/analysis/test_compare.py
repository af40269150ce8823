"""Comparing two traces: metrics, step alignment, curves, difference heatmap, verdicts, compression."""

from __future__ import annotations

import numpy as np
import pytest

from o3viz.analysis.align import align_rounds
from o3viz.analysis.compare import PROGRESS_BINS, align_steps, compare_traces, step_series
from o3viz.figures import alignment_figure, curves_figure, diff_heatmap, verdicts_figure
from o3viz.testing.synthetic import make_trace


def test_metrics_have_deltas_for_numbers_and_none_for_text():
    a, b = make_trace(8, seed=1), make_trace(20, seed=2, rounds=3)
    c = compare_traces(a, b)
    m = {r.name: r for r in c.metrics}
    assert m["steps (final round)"].a == 8 and m["steps (final round)"].b == 20
    assert m["steps (final round)"].delta == 12
    assert m["steps (all rounds)"].b == sum(len(r.steps) for r in b.rounds) > 20
    assert m["rounds"].delta == 2
    assert m["final verdict"].delta is None and m["model"].delta is None


def test_alignment_matches_equal_steps_and_reports_insertions():
    a = make_trace(10, seed=7)
    b = make_trace(10, seed=7)
    b.final.steps = b.final.steps[:4] + b.final.steps[6:]  # B skips two steps of A
    rows, ratio = align_steps(a.final, b.final)
    assert [r.tag for r in rows].count("delete") == 2
    assert sum(r.tag == "equal" for r in rows) == 8 and 0.8 < ratio < 1
    assert all(r.a_text == r.b_text for r in rows if r.tag == "equal")


def test_alignment_of_identical_traces_is_all_equal():
    a = make_trace(12, seed=3)
    rows, ratio = align_steps(a.final, a.final)
    assert ratio == 1.0 and {r.tag for r in rows} == {"equal"}


def test_curves_have_one_value_per_step_for_each_trace():
    a, b = make_trace(9, seed=1), make_trace(31, seed=2)
    c = compare_traces(a, b)
    for name in ("entropy", "confidence", "attention on prompt"):
        assert len(c.curves[name][0]) == 9 and len(c.curves[name][1]) == 31
    s = step_series(a.final)
    assert all(0 <= v <= 1 for v in s["attention on prompt"])


def test_difference_heatmap_on_the_same_prompt_is_b_minus_a_and_zero_for_itself():
    a = make_trace(10, seed=1)
    same = compare_traces(a, a)
    assert same.diff.values is not None and same.diff.values.shape[0] == PROGRESS_BINS
    assert np.abs(same.diff.values).max() == 0
    c = compare_traces(a, make_trace(25, seed=1, daa_mode="off"))  # same seed: same prompt tokens
    assert c.diff.values is not None and "prompt token" in c.diff.what


def test_difference_heatmap_explains_when_shapes_do_not_allow_it():
    a, b = make_trace(10, seed=1), make_trace(10, seed=2)
    b.final.attention = None
    c = compare_traces(a, b)
    assert c.diff.values is None and "no recorded attention" in c.diff.reason
    assert "No difference heatmap" in diff_heatmap(c).layout.annotations[0].text


def test_verdict_and_compression_differences():
    a = make_trace(10, seed=1, rounds=1)
    b = make_trace(10, seed=1, rounds=3, compression=False)
    c = compare_traces(a, b)
    total_b = sum(len(r.checks) for r in b.rounds)
    assert sum(v[1] for v in c.verdicts.values()) == total_b
    comp = {r.name: r for r in c.compression}
    assert comp["compression"].a == "pointer" and comp["compression"].b == "off"


def test_comparison_figures_build_for_traces_of_different_lengths():
    c = compare_traces(make_trace(5, seed=1), make_trace(60, seed=9, rounds=2), a_name="A <b>", b_name="B")
    figs = [curves_figure(c), diff_heatmap(c), verdicts_figure(c), alignment_figure(c)]
    assert all(f.data for f in figs)
    assert "&lt;b&gt;" in figs[0].data[0].name  # names from files are escaped


def test_an_import_without_tokens_or_attention_compares_with_a_local_run():
    from o3viz.importers import import_trace

    imported = import_trace(
        b"<think>First, 3 * 4 = 12. Wait, check: 12 + 1 = 13. So 13.</think>The answer is 13."
    )
    c = compare_traces(imported, make_trace(15, seed=2))
    assert c.diff.values is None and c.diff.reason
    assert len(c.curves["entropy"][0]) == len(imported.steps) and len(c.curves["entropy"][1]) == 15
    assert all(
        f.data or f.layout.annotations for f in (curves_figure(c), diff_heatmap(c), alignment_figure(c))
    )


def test_every_count_says_whether_it_is_a_total_or_the_final_round():
    c = compare_traces(make_trace(8, seed=1), make_trace(9, seed=2, rounds=2))
    counts = [m for m in c.metrics if isinstance(m.a, int) and m.name != "rounds"]
    assert counts and all("all rounds" in m.name or "final round" in m.name for m in counts)


def test_the_summary_names_answer_verdict_steps_and_the_first_divergence():
    a = make_trace(10, seed=7)
    b = make_trace(10, seed=7)
    b.final.steps = b.final.steps[:4] + b.final.steps[6:]
    c = compare_traces(a, b)
    assert c.first_divergence is not None and c.first_divergence.a_index == 4
    text = " · ".join(c.summary())
    assert "same answer" in text and "steps 10 → 8" in text and "only A has step 4" in text


# Long traces: episodes first, then steps inside matched episodes (issue 24)


@pytest.fixture(scope="module")
def long_pair():
    pytest.importorskip("o3viz.testing.long_r1")
    from o3viz.testing.compare_pair import planted_pair
    from o3viz.testing.long_r1 import R1_FILE

    if not R1_FILE.exists():
        pytest.skip("../shared/data is absent")
    return planted_pair(2000)


def _covers_every_step_once_in_order(rows, a, b) -> bool:
    ia = [r.a_index for r in rows if r.a_index is not None]
    ib = [r.b_index for r in rows if r.b_index is not None]
    return ia == [s.index for s in a.steps] and ib == [s.index for s in b.steps]


def test_two_2000_step_traces_align_by_episode_in_bounded_cells_and_find_the_replaced_episode(long_pair):
    a, b, at = long_pair
    n, m = len(a.final.steps), len(b.final.steps)
    al = align_rounds(a.final, b.final)
    assert al.method == "episodes" and al.pairs
    assert al.cells <= al.bound <= n * m // 12  # the exact alignment would be n · m = 3.9 M cells
    d = next(r for r in al.rows if r.tag != "equal")
    assert (d.a_index, d.b_index) == (at, at) and d.tag == "replace"
    assert _covers_every_step_once_in_order(al.rows, a.final, b.final)
    changed = sum(sa.text != sb.text for sa, sb in zip(a.final.steps, b.final.steps, strict=True))
    assert sum(r.tag != "equal" for r in al.rows) == changed  # nothing else is reported as changed
    c = compare_traces(a, b)
    assert c.first_divergence == d and f"A step {at} vs B step {at}" in c.summary()[-1]


def test_a_deleted_episode_is_reported_as_deletes_and_every_other_step_stays_equal(long_pair):
    import copy

    a, _, _ = long_pair
    b = copy.deepcopy(a)
    b.final.steps = b.final.steps[:400] + b.final.steps[450:]
    al = align_rounds(a.final, b.final)
    assert al.method == "episodes" and al.cells <= al.bound
    assert [r.tag for r in al.rows].count("delete") == 50 and {r.tag for r in al.rows} == {"equal", "delete"}
    assert next(r for r in al.rows if r.tag != "equal").a_index == a.final.steps[400].index


def test_unrelated_long_traces_still_align_in_bounded_cells(long_pair):
    import copy
    import random

    a, _, _ = long_pair
    b = copy.deepcopy(a)
    random.Random(0).shuffle(b.final.steps)
    al = align_rounds(a.final, b.final)
    assert al.cells <= al.bound <= len(a.final.steps) ** 2 // 12
    assert _covers_every_step_once_in_order(al.rows, a.final, b.final)
    assert al.similarity < 0.2


def test_short_rounds_are_aligned_exactly_in_one_pass_of_n_times_m_cells():
    a, b = make_trace(150, seed=1), make_trace(150, seed=2)
    al = align_rounds(a.final, b.final)
    assert al.method == "steps" and al.cells == al.bound == 150 * 150
    rows, ratio = align_steps(a.final, b.final)
    assert (rows, ratio) == (al.rows, al.similarity)
