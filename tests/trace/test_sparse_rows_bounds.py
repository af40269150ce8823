"""Issue 41, findings 11 and 12: the sizes a file declares for its top-k mean rows are checked
against what it holds. A ``top_k`` below the pairs each row holds made every save rebuild the rows
at full width (a 170 KB trace: +2 GiB to ``verify``, ``store add``, importance), and a ``width``
past the round's tokens made one shown token build one row of that width (3 GiB a click). Memory
is measured from outside, in a child process (``o3viz.testing.peak_rss``)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from o3viz.errors import TraceError
from o3viz.testing.peak_rss import measure_peak
from o3viz.testing.synthetic import make_trace
from o3viz.trace import Trace
from o3viz.trace.attention import PairRows, top_k_pairs
from o3viz.trace.codec import MAX_ARRAY_ELEMENTS

MiB = 1 << 20
K = 8


def _sparse_trace() -> Trace:
    """A synthetic trace whose final round keeps its mean rows as ``K`` pairs each."""
    trace = make_trace(6, seed=1)
    att = trace.final.attention
    att.mean, att.rows_top_k = PairRows(*top_k_pairs(np.asarray(att.mean), K), att.mean.shape[1]), K
    return trace


def _declaring(trace: Trace, **mean) -> dict:
    """The trace's dict with its final round's ``mean`` fields replaced (``top_k``, ``width``)."""
    d = trace.to_dict()
    d["rounds"][-1]["attention"]["mean"].update(mean)
    return d


def test_sparse_rows_round_trip_at_the_width_of_the_rounds_tokens():
    trace = _sparse_trace()
    rnd = trace.final
    assert rnd.attention.mean.width == len(rnd.prompt_tokens) + len(rnd.tokens)
    assert Trace.from_dict(trace.to_dict()) == trace


def test_a_declared_top_k_below_the_pairs_each_row_holds_is_refused_on_read():
    d = _declaring(_sparse_trace(), top_k=2)
    with pytest.raises(
        TraceError, match=r"mean\.top_k: is 2: it must be at least 1 and at least the 8 pairs each row holds"
    ) as err:
        Trace.from_dict(d)  # before: read as is, and every save scattered every row to its width
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("top_k", [-1, 0])
def test_a_top_k_of_zero_or_less_is_refused(top_k):
    with pytest.raises(TraceError, match="mean.top_k"):
        Trace.from_dict(_declaring(_sparse_trace(), top_k=top_k))


def test_rows_holding_more_pairs_than_top_k_are_cut_from_their_pairs_on_save():
    trace = _sparse_trace()
    att = trace.final.attention
    att.rows_top_k = 3  # set in code: the save keeps each row's 3 largest of its 8 pairs
    saved = att.to_dict()["mean"]
    back = Trace.from_dict(trace.to_dict()).final.attention
    assert back.mean.k == 3 and saved["top_k"] == 3
    dense = np.asarray(att.mean)
    expect = top_k_pairs(dense, 3)
    kept = np.take_along_axis(dense, back.mean.index.astype(np.int64), axis=1)
    assert np.array_equal(np.sort(kept, axis=1), np.sort(expect[0], axis=1))
    assert (np.diff(back.mean.index, axis=1) > 0).all()  # key positions stay ascending


@pytest.mark.parametrize("width", [None, 4_000_000, MAX_ARRAY_ELEMENTS])
def test_a_width_past_the_rounds_tokens_is_refused_in_one_line(width):
    trace = _sparse_trace()
    rnd = trace.final
    tokens = len(rnd.prompt_tokens) + len(rnd.tokens)
    width = width or tokens + 1
    with pytest.raises(TraceError, match=r"mean\.width: is [\d,]+, more than the round's") as err:
        Trace.from_dict(_declaring(trace, width=width))
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    "index, why",
    [(-1, "key positions must lie in"), (10**6, "key positions must lie in")],
)
def test_key_positions_outside_the_width_are_refused(index, why):
    trace = _sparse_trace()
    att = trace.final.attention
    att.mean.index[0, 0] = index if index >= 0 else -1
    with pytest.raises(TraceError, match=why):
        Trace.from_dict(trace.to_dict())


def test_repeated_key_positions_in_a_row_read_as_one_key():
    trace = _sparse_trace()
    att = trace.final.attention
    att.mean.index[0, :] = 5  # a hand-made file: every pair of row 0 on key 5
    back = Trace.from_dict(trace.to_dict()).final.attention
    row = back.mean[0]
    assert row.shape == (back.mean.width,) and np.count_nonzero(row) <= 1


def test_a_width_of_zero_with_pairs_is_refused():
    with pytest.raises(TraceError, match="key positions must lie in"):
        Trace.from_dict(_declaring(_sparse_trace(), width=0))


def _hostile_file(tmp_path, **mean) -> str:
    path = tmp_path / "hostile.o3trace.json"
    path.write_text(json.dumps(_declaring(_sparse_trace(), **mean)))
    return str(path)


_LOAD_SAVE_SHOW = """
try:
    t = load_trace(PATH)
    t.save(PATH + ".out.o3trace.json")
    token_attention(t.final, len(t.final.tokens) - 1)
    print("loaded")
except TraceError as exc:
    print("refused:", exc)
"""
_SETUP = "from o3viz.trace import load_trace\nfrom o3viz.errors import TraceError\nfrom o3viz.figures.details import token_attention"


@pytest.mark.subprocess
@pytest.mark.parametrize(
    "mean",
    [{"top_k": 1, "width": 4_000_000}, {"width": 16_000_000}],
    ids=["declared-top-k", "declared-width"],
)
def test_a_hostile_declared_size_costs_no_memory(tmp_path, mean):
    path = _hostile_file(tmp_path, **mean)
    run = measure_peak(_LOAD_SAVE_SHOW.replace("PATH", repr(path)), setup=_SETUP, timeout=120)
    # before: a top_k of 1 rebuilt every row at 4M keys on save (+1.0 GiB for this 76 KB file); a
    # width of 16M built one row of it, in float64 and its running sum, for the shown token (+370 MiB)
    assert run.returncode == 0, run.stderr[-500:]
    assert run.stdout.startswith("refused:") and run.stdout.count("\n") == 1, run.stdout
    assert run.growth < 32 * MiB, run.growth >> 20
