"""Attention rows kept as each row's largest entries: (value, key position) pairs instead of rows as
long as the context, so a long generation's file and memory stay linear in its tokens
(``o3viz.run.sizing``: ``rows == "top_k"``). ``PairRows`` reads like the dense (G, C) array it
stands for; ``top_k_pairs`` cuts the pairs from dense rows, ``scatter_pairs`` builds rows back, and
``decode_pairs``/``decode_mean_rows`` read them from a trace file, bounded.
"""

from __future__ import annotations

import numpy as np

from o3viz.trace.codec import MAX_ARRAY_ELEMENTS, arrays_equal, decode_array, fail, req


class PairRows:
    """(G, C) attention rows kept as each row's ``k`` largest entries: ``values`` (G, k) and int32
    key positions ``index`` (G, k), zeros elsewhere. It reads like the dense array it stands for
    without holding it (a 16k-token enriched import: 6 MB, not 512 MB): ``shape``, ``dtype``,
    ``rows[g]``, ``rows[g0:g1]`` and ``rows[g0:g1, :c1]`` build dense blocks of the rows asked
    for only; ``astype`` and ``np.asarray`` build the whole (G, C) array, for callers that need it.

    >>> r = PairRows(np.array([[0.5, 0.25]], np.float16), np.array([[0, 2]], np.int32), 4)
    >>> r.shape, r[0].tolist(), r[0:1, :2].tolist()
    ((1, 4), [0.5, 0.0, 0.25, 0.0], [[0.5, 0.0]])
    """

    ndim = 2

    def __init__(self, values: np.ndarray, index: np.ndarray, width: int) -> None:
        if values.ndim != 2 or index.shape != values.shape:
            raise ValueError(f"pairs of shape {values.shape} and {index.shape}: expected (G, k) twice")
        self.values, self.index, self.width = values, index, int(width)

    @property
    def shape(self) -> tuple[int, int]:
        return (int(self.values.shape[0]), self.width)

    @property
    def dtype(self) -> np.dtype:
        return self.values.dtype

    @property
    def k(self) -> int:
        return int(self.values.shape[1])

    @property
    def nbytes(self) -> int:
        return int(self.values.nbytes + self.index.nbytes)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, key) -> np.ndarray:
        rows, cols = key if isinstance(key, tuple) else (key, slice(None))
        # only the rows asked for are built (a view's window, a step, one row)
        return scatter_pairs(self.values[rows], self.index[rows], self.width)[..., cols]

    def astype(self, dtype, copy: bool = True) -> np.ndarray:
        return scatter_pairs(self.values.astype(dtype), self.index, self.width)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        return self.astype(dtype or self.dtype)

    def same(self, other: PairRows) -> bool:
        """The same rows as the same pairs (``==`` compares elements, as for an array)."""
        return (
            self.width == other.width
            and arrays_equal(self.values, other.values)
            and arrays_equal(self.index, other.index)
        )

    def __eq__(self, other):  # elementwise, as the dense array would
        return np.asarray(self) == (np.asarray(other) if isinstance(other, PairRows) else other)

    def __ne__(self, other):
        return np.asarray(self) != (np.asarray(other) if isinstance(other, PairRows) else other)

    __hash__ = None  # type: ignore[assignment]


def top_k_pairs(rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's ``k`` largest entries (last axis) as values and int32 positions, positions
    ascending (ties and zeros included when a row has fewer than ``k`` nonzeros).

    >>> v, i = top_k_pairs(np.array([0.1, 0.5, 0.2, 0.9]), 2)
    >>> v.tolist(), i.tolist()
    ([0.5, 0.9], [1, 3])
    """
    if rows.ndim == 1:  # one row: the blocks below run over the leading axis
        values, index = top_k_pairs(rows[None], k)
        return values[0], index[0]
    n, k = rows.shape[-1], min(k, rows.shape[-1])
    idx = np.empty((*rows.shape[:-1], k), dtype=np.int32)
    for a in range(0, max(rows.shape[0], 1), 256):  # in blocks of rows: argpartition's int64 is (.., n)
        part = np.argpartition(rows[a : a + 256], n - k, axis=-1)[..., n - k :]
        idx[a : a + 256] = np.sort(part, axis=-1)
    return np.take_along_axis(rows, idx, axis=-1), idx


def scatter_pairs(values: np.ndarray, index: np.ndarray, width: int) -> np.ndarray:
    """Rows of ``width`` with ``values`` at ``index`` (last axis) and zeros elsewhere."""
    out = np.zeros((*values.shape[:-1], width), dtype=values.dtype)
    np.put_along_axis(out, index.astype(np.int64), values, axis=-1)
    return out


def kept_pairs(mean: np.ndarray | PairRows, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(G, ≤ k) values and key positions of each mean row's ``k`` largest entries; top-k rows are
    cut from their own pairs (never rebuilt at full width: G × C can be far larger than the file).

    >>> r = PairRows(np.array([[0.5, 0.25, 0.75]], np.float16), np.array([[1, 4, 6]], np.int32), 9)
    >>> [a.tolist() for a in kept_pairs(r, 2)]
    [[[0.5, 0.75]], [[1, 6]]]
    """
    if not isinstance(mean, PairRows):
        return top_k_pairs(np.asarray(mean), k)
    if mean.k <= k:
        return mean.values, mean.index
    values, at = top_k_pairs(mean.values, k)  # at: positions among the pairs, ascending as the keys
    return values, np.take_along_axis(mean.index, at, axis=-1)


def decode_pairs(d: dict, path: str, ndim: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    """(values, int32 key positions) of the same shape from a file's pairs, every position below ``width``."""
    values = decode_array(req(d, "values", dict, path), f"{path}.values", ndim=ndim)
    index = decode_array(req(d, "index", dict, path), f"{path}.index", ndim=ndim, dtypes=("int32",))
    if index.shape != values.shape:
        raise fail(f"{path}.index", f"has shape {list(index.shape)}, values {list(values.shape)}")
    if index.size and (int(index.min()) < 0 or int(index.max()) >= width):
        raise fail(f"{path}.index", f"key positions must lie in 0..{width - 1}")
    return values, index


def decode_mean_rows(d: dict, path: str) -> np.ndarray | PairRows:
    """The (G, C) mean rows: a dense array, or top-k (value, key) pairs with the row ``width``."""
    if "top_k" not in d:
        return decode_array(d, path, ndim=2)
    width = req(d, "width", int, path)
    if not 0 <= width <= MAX_ARRAY_ELEMENTS:
        raise fail(f"{path}.width", f"must lie in 0..{MAX_ARRAY_ELEMENTS}")
    values, index = decode_pairs(d, path, 2, width)
    return PairRows(values, index, width)  # held as pairs: linear in the rows, whatever the width
