"""Inspect's attention and tokens views at 16k and 32k tokens draw a bounded number of cells: the
token heatmap windows generated tokens and bins the context, the step view keeps its top targets,
the tokens view renders one window; per-head rows kept as top-k pairs draw like dense ones."""

from __future__ import annotations

import numpy as np
import pytest

from o3viz.figures import (
    MAX_TOKEN_ROWS,
    layer_head_heatmap,
    relevance_figure,
    step_attention_heatmap,
    token_heatmap,
    tokens_html,
)
from o3viz.figures.attention import MAX_COLS
from o3viz.figures.step_attention import TOP_TARGETS
from o3viz.figures.tokens import MAX_TOKENS_HTML
from o3viz.testing.long_capture import long_capture_trace


@pytest.fixture(scope="module", params=[16384, 32768])
def long_round(request):
    return long_capture_trace(request.param).final


def _cells(fig) -> int:
    return sum(np.asarray(t.z, dtype=object).size for t in fig.data if getattr(t, "z", None) is not None)


def test_the_token_heatmap_bins_the_long_context(long_round):
    att = long_round.attention
    for layer in (None, att.layers[0]):  # the mean rows, and per-head rows from top-k pairs
        fig = token_heatmap(long_round, 0, MAX_TOKEN_ROWS, layer=layer)
        z = np.asarray(fig.data[0].z)
        assert z.shape[1] <= MAX_COLS and z.shape[0] <= MAX_TOKEN_ROWS
        assert len(fig.data[0].x) == z.shape[1]
        assert np.nanmax(z) > 0  # something is drawn


def test_per_head_rows_from_pairs_keep_each_rows_mass(long_round):
    att = long_round.attention
    layer = att.layers[-1]
    block = att.head_block(layer, 0, 4)
    values = att.per_head_top[0][:4, att.layers.index(layer)].astype(np.float32)
    np.testing.assert_allclose(block.sum(-1), values.sum(-1), rtol=1e-5)
    assert block.shape[-1] == att.mean.shape[1]


def test_the_step_view_and_the_small_figures_stay_bounded(long_round):
    steps = len(long_round.steps)
    assert _cells(step_attention_heatmap(long_round)) <= (TOP_TARGETS + 2) * steps
    att = long_round.attention
    assert _cells(layer_head_heatmap(long_round, 0, 8)) == att.num_layers * att.num_heads
    assert all(len(t.x) <= MAX_COLS for t in relevance_figure(long_round).data)


def test_the_tokens_view_renders_one_window():
    rnd = long_capture_trace(2048, steps=600).final
    assert len(rnd.tokens) > MAX_TOKENS_HTML
    assert tokens_html(rnd).count('class="tok"') == MAX_TOKENS_HTML


def test_figure_payload_at_32k_is_about_that_at_1k():
    short, long = long_capture_trace(1024).final, long_capture_trace(32768).final
    a, b = (len(token_heatmap(r, 0, 64).to_json()) for r in (short, long))
    assert b < 2 * a, (a, b)


def test_the_colour_bar_of_small_shares_has_decimals(long_round):
    # a 16k context binned to 600 columns: each cell holds well under 1%; ".0%" read "0%" everywhere
    fig = token_heatmap(long_round, 0, 64)
    assert fig.data[0].zmax < 0.01 and fig.data[0].colorbar.tickformat == ".2%"
