"""Issue 40: attention rows kept as top-k pairs stay pairs in memory (``PairRows``). Before, a
trace's top-k mean rows were scattered back into a dense (G, C) array on load (a 16k-token
enriched import: 512 MiB; 32k: 2 GiB), and a file whose G × C passed the array cap (128M
elements, about 11.5k tokens of enriched text) could not be loaded at all."""

from __future__ import annotations

import numpy as np

from o3viz.trace.attention import AttentionRecord, PairRows, scatter_pairs, top_k_pairs
from o3viz.trace.codec import MAX_ARRAY_ELEMENTS


def _pairs(g: int, width: int, k: int, seed: int = 0) -> PairRows:
    rng = np.random.default_rng(seed)
    index = np.sort(rng.choice(width, size=(g, k)), axis=1).astype(np.int32)
    for row in index:  # distinct keys per row, as top_k_pairs gives
        row[:] = np.sort(rng.choice(width, size=k, replace=False))
    values = rng.random((g, k)).astype(np.float16)
    return PairRows(values, index, width)


def test_pair_rows_read_like_the_dense_rows_they_stand_for():
    rows = _pairs(50, 300, 6)
    dense = scatter_pairs(rows.values, rows.index, 300)
    assert rows.shape == dense.shape and rows.dtype == dense.dtype and len(rows) == 50
    assert np.array_equal(rows[7], dense[7])
    assert np.array_equal(rows[10:20], dense[10:20])
    assert np.array_equal(rows[10:20, :120], dense[10:20, :120])
    assert np.array_equal(rows[3:9, :40].astype(np.float32), dense[3:9, :40].astype(np.float32))
    assert np.array_equal(np.asarray(rows), dense) and np.array_equal(
        rows.astype(np.float32), dense.astype(np.float32)
    )
    assert int((rows != 0).sum(1).max()) <= 6


def _record(mean, rows_top_k=None) -> AttentionRecord:
    g, c = mean.shape
    att = AttentionRecord(2, 3, 4, mean, layer_head=np.zeros((g, 2, 3), np.float16))
    att.rows_top_k = rows_top_k
    return att


def test_a_long_records_rows_load_as_pairs_past_the_dense_cap():
    g = width = 12_000  # G × C = 144M elements: over the cap a dense (G, C) array is held to
    assert g * width > MAX_ARRAY_ELEMENTS
    att = _record(_pairs(g, width, 8), rows_top_k=8)
    back = AttentionRecord.from_dict(att.to_dict(), "attention")
    assert isinstance(back.mean, PairRows) and back.mean.nbytes == g * 8 * (2 + 4)  # linear in G
    assert back == att and back.num_generated == g
    assert np.array_equal(back.mean[5000:5010, :300], att.mean[5000:5010, :300])


def test_dense_rows_cut_to_top_k_compare_equal_to_their_pairs_after_a_round_trip():
    rng = np.random.default_rng(1)
    dense = rng.random((30, 90)).astype(np.float16)
    att = _record(PairRows(*top_k_pairs(dense, 5), 90), rows_top_k=5)
    back = AttentionRecord.from_dict(att.to_dict(), "attention")
    assert back == att
    assert np.array_equal(np.asarray(back.mean), scatter_pairs(*top_k_pairs(dense, 5), 90))
