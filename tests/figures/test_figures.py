"""The Plotly builders, tested without streamlit: structure, escaping, bounded payloads."""

from __future__ import annotations

import numpy as np
import pytest

from o3viz.analysis.graph import build_graph
from o3viz.figures import (
    MAX_TOKEN_ROWS,
    check_rows,
    checks_figure,
    claims_html,
    escape_markdown,
    figure_html,
    layer_head_heatmap,
    node_details,
    relevance_figure,
    token_heatmap,
    tokens_html,
)
from o3viz.figures.attention import MAX_COLS, bin_axis
from o3viz.testing.synthetic import HOSTILE, make_trace


@pytest.fixture(scope="module")
def trace():
    return make_trace(14, seed=4, rounds=2, hostile=True, max_per_head_cells=10**9)


@pytest.fixture(scope="module")
def long_trace():
    return make_trace(700, seed=1)


def test_node_details_of_a_step_list_tokens_checks_and_attention(trace):
    G = build_graph(trace)
    rnd = trace.final
    wrong = next((c for c in rnd.checks if c.verdict == "wrong" and c.step is not None), rnd.checks[0])
    det = node_details(trace, G, f"step:{rnd.index}:{wrong.step}")
    s = rnd.steps[wrong.step]
    assert [t["#"] for t in det.tokens] == list(range(s.token_start, s.token_end))
    assert any(c["verdict"] == wrong.verdict for c in det.checks)
    assert det.attention and abs(sum(v for _, v in det.attention) - 1) < 0.02


def test_node_details_of_a_decision_point_list_its_alternatives(trace):
    G = build_graph(trace)
    dp = next(n for n, k in G.nodes(data="kind") if k == "decision")
    det = node_details(trace, G, dp)
    alts = [n for n in G.successors(dp) if G.nodes[n]["kind"] == "alternative"]
    assert [a["token"] for a in det.alternatives] == [G.nodes[n]["text"] for n in alts]


def test_token_heatmap_window_is_bounded_and_rows_sum_to_one(long_trace):
    rnd = long_trace.final
    fig = token_heatmap(rnd, 100, 100 + 10 * MAX_TOKEN_ROWS)
    z = np.asarray(fig.data[0].z)
    assert z.shape[0] == MAX_TOKEN_ROWS and z.shape[1] <= MAX_COLS
    np.testing.assert_allclose(z.sum(axis=1), 1.0, atol=2e-2)  # binning sums mass, so rows still sum to 1


def test_token_heatmap_for_one_head_uses_that_heads_rows(trace):
    rnd = trace.final
    att = rnd.attention
    fig = token_heatmap(rnd, 0, 5, layer=att.layers[0], head=1)
    want = att.per_head[0:5, 0, 1, : att.prompt_len + 5].astype(np.float32)
    np.testing.assert_allclose(np.asarray(fig.data[0].z), want, atol=1e-6)


def test_bin_axis_keeps_attention_mass():
    m = np.random.default_rng(0).random((3, 1001))
    out, starts = bin_axis(m, 100, axis=1)
    assert out.shape == (3, 100) and starts[0] == 0
    np.testing.assert_allclose(out.sum(axis=1), m.sum(axis=1))


def test_layer_head_and_relevance_figures_have_model_shapes(trace):
    rnd = trace.final
    att = rnd.attention
    z = np.asarray(layer_head_heatmap(rnd, 0, 4).data[0].z)
    assert z.shape == (att.num_layers, att.num_heads)
    fig = relevance_figure(rnd, 0, 10)
    assert len(fig.data) == 2  # relevance and the allocate-mode shift
    assert len(fig.data[0].y) == att.prompt_len + att.num_generated


def test_figures_without_attention_say_why():
    t = make_trace(5, seed=0)
    t.final.attention = None
    for fig in (token_heatmap(t.final), relevance_figure(t.final)):
        assert "no" in fig.layout.annotations[0].text.lower()


def test_tokens_html_escapes_everything_and_marks_decisions(trace):
    out = tokens_html(trace.final)
    assert "<script>" not in out and "<img" not in out and "&lt;script&gt;" in out
    assert out.count('class="tok"') == len(trace.final.tokens)
    assert "border-bottom:3px" in out


def test_claims_html_shows_wrong_claims_in_red_with_the_correct_value(trace):
    rnd = next(r for r in trace.rounds if any(c.verdict == "wrong" for c in r.checks))
    wrong = next(c for c in rnd.checks if c.verdict == "wrong")
    out = claims_html(rnd)
    assert f"should be {wrong.computed}" in out and "background:rgba(213,94,0," in out  # the palette's red
    assert "<script>" not in out and "<img" not in out


def test_escape_markdown_neutralises_markdown_latex_and_links():
    out = escape_markdown(HOSTILE[2])
    assert "\\$" in out and "\\*\\*" in out and "\\[" in out and "\\(" in out


def test_checks_figure_has_a_row_per_round_and_rows_for_the_table(trace):
    fig = checks_figure(trace)
    assert len(fig.data[0].z) == len(trace.rounds)
    assert len(check_rows(trace)) == sum(len(r.checks) for r in trace.rounds)


def test_figure_html_is_standalone_with_plotly_inlined(trace):
    html = figure_html(checks_figure(trace)).decode()
    assert "<html>" in html and "<script src=" not in html and len(html) > 1_000_000  # plotly.js inline


def test_the_verification_legend_has_one_entry_per_colour_and_pass_and_fail_differ():
    """Issue 35, finding 10: the legend listed pass and correct, fail and wrong, as four entries
    in two colours, so it read as two verdicts sharing one colour."""
    from o3viz.trace import Check, Round, Task, Trace

    checks = [Check("test", "t1", "pass"), Check("answer", "final", "wrong"), Check("claim", "c", "correct")]
    fig = checks_figure(Trace(Task("q"), [Round(index=0, checks=checks)]))
    legend = {t.name: t.marker.color for t in fig.data if t.type == "scatter"}
    assert set(legend) == {"pass / correct", "fail / wrong"}
    assert len(set(legend.values())) == len(legend)  # one colour per entry, green ≠ red


def test_the_verification_columns_are_named_by_their_checks_not_numbered_in_halves():
    """The Inspect screenshot's x axis read −0.5, 0, 0.5, … 2.5 under three checks: nothing said
    which column was which check. Each column is now its check's kind and name (rounds agree), or
    its number where the rounds' checks at that place differ."""
    from o3viz.trace import Check, Round, Task, Trace

    same = [Check("claim", "16*3 = 48", "correct"), Check("answer", "final answer 3", "wrong")]
    other = [Check("claim", "16*3 = 48", "correct"), Check("answer", "final answer 18", "correct")]
    fig = checks_figure(Trace(Task("q"), [Round(index=0, checks=same), Round(index=1, checks=other)]))
    assert list(fig.layout.xaxis.tickvals) == [0, 1]
    assert list(fig.layout.xaxis.ticktext) == ["claim: 16*3 = 48", "check 2"]
    # no axis title: a user saw "check" drawn over the names (the names say what each column is)
    assert fig.layout.xaxis.title.text is None and fig.layout.xaxis.automargin
