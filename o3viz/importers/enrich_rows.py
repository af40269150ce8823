"""Where enrichment's attention rows go, one chunk of query rows at a time (``o3viz.importers.enrich``):
``EnrichRows`` holds the trace's arrays (mean rows dense or as top-k pairs, per-head rows dense or
as top-k pairs, prompt shares) and takes each chunk's ``WindowRecorder`` the moment its forward
ends; ``StepAllocation`` sums each step's full mean rows as they pass, so the step allocation is
the one ``o3viz.run.allocation.step_allocation`` computes from the dense rows, even when only
their top-k pairs are kept.
"""

from __future__ import annotations

import numpy as np

from o3viz.hooks.blockwise import WindowRecorder
from o3viz.run.allocation import allocation_columns, allocation_row
from o3viz.trace.attention import PairRows, top_k_pairs
from o3viz.trace.parts import Segment, Step

CHUNK_BYTES = 64 * 2**20  # one chunk's (rows, keys) fp32 sums at most
MIN_CHUNK = 16


def chunk_rows(num_keys: int) -> int:
    """Query rows per forward chunk so one chunk's (rows, keys) fp32 stays within ``CHUNK_BYTES``.

    >>> chunk_rows(8192), chunk_rows(32768)
    (2048, 512)
    """
    return max(MIN_CHUNK, CHUNK_BYTES // (4 * max(num_keys, 1)))


class StepAllocation:
    """``step_allocation(mean, prompt_len, segments, steps)`` from the mean rows as they come, in
    order: each step's rows are summed in fp32 (in row order, as ``mean(0)`` sums them) and the
    step's allocation row is made when its last row has passed. Holds one (C,) sum per open step."""

    def __init__(self, prompt_len: int, segments: list[Segment], steps: list[Step]) -> None:
        self.steps = [(st.token_start, st.token_end) for st in steps]
        self.cols, self.labels = allocation_columns(prompt_len, segments, steps)
        self.alloc = np.zeros((len(steps), len(self.cols)), dtype=np.float32)  # (S, K)
        self._sums: dict[int, np.ndarray] = {}  # open step -> (C,) fp32 sum of its rows so far

    def add(self, g0: int, rows: np.ndarray) -> None:
        """Global rows ``g0 .. g0+r`` of the mean, ``rows`` (r, C) as stored (fp16)."""
        g1 = g0 + rows.shape[0]
        for i, (a, b) in enumerate(self.steps):
            lo, hi = max(a, g0), min(b, g1)
            if lo >= hi:
                continue
            part = rows[lo - g0 : hi - g0].astype(np.float32)
            if i in self._sums:  # the running sum first: the same order as one sum over all rows
                part = np.concatenate([self._sums[i][None], part])
            self._sums[i] = part.sum(0)
            if hi == b:
                self.alloc[i] = allocation_row(self._sums.pop(i) / np.float32(b - a), self.cols)


class EnrichRows:
    """The trace's arrays for G text tokens over C = P + G keys, filled chunk by chunk.

    ``mean`` (G, C) fp16 dense, or with ``rows_k`` the pairs ``mean_top`` ((G, k) fp16 values,
    int32 global keys); ``layer_head`` (G, L, H) fp16; ``per_head`` (G, nL, H, C) fp16 or with
    ``head_k`` ``per_head_top`` ((G, nL, H, k) fp16, int32 global keys)."""

    def __init__(self, p: int, g: int, n_layers: int, n_heads: int, keep: list[int], head_k, rows_k, alloc):
        self.p, self.c, self.keep, self.alloc, self.rows_k = p, p + g, keep, alloc, rows_k
        self.mean = np.zeros((g, self.c), dtype=np.float16) if rows_k is None else None
        self.mean_top = None
        if rows_k is not None:
            k = min(rows_k, self.c)
            self.mean_top = (np.zeros((g, k), np.float16), np.zeros((g, k), np.int32))
        self.layer_head = np.zeros((g, n_layers, n_heads), dtype=np.float16)
        dense_heads = keep and head_k is None
        self.per_head = np.zeros((g, len(keep), n_heads, self.c), dtype=np.float16) if dense_heads else None
        self.per_head_top = None
        if keep and head_k is not None:
            shape = (g, len(keep), n_heads, head_k)
            self.per_head_top = (np.zeros(shape, np.float16), np.zeros(shape, np.int32))

    def add(self, rec: WindowRecorder, g0: int, text_start: int, n_layers: int, n_heads: int) -> None:
        """A chunk's recorder: its rows are global rows ``g0 ..``; window key k is global column k
        in the prompt, ``k + text_start`` in the text (the window's first text token)."""
        p, g1 = self.p, g0 + rec.acc.shape[0]
        kw = rec.acc.shape[1]  # window keys seen by the chunk: [0, kw)
        cols = slice(p + text_start, p + text_start + kw - p)
        acc = rec.acc.div_(n_layers * n_heads).numpy()
        rows = self.mean[g0:g1] if self.mean is not None else np.zeros((g1 - g0, self.c), np.float16)
        rows[:, :p], rows[:, cols] = acc[:, :p], acc[:, p:]  # fp32 -> fp16 as stored
        self.alloc.add(g0, rows)  # the full rows, before any cut
        if self.mean_top is not None:
            vals, idx = top_k_pairs(rows, self.mean_top[0].shape[1])
            self.mean_top[0][g0:g1], self.mean_top[1][g0:g1] = vals, idx
        self.layer_head[g0:g1] = rec.layer_head.numpy()
        for i, layer in enumerate(self.keep if rec.per_head_top else []):
            vals, idx = (t.numpy() for t in rec.per_head_top[layer])
            self.per_head_top[0][g0:g1, i] = vals
            self.per_head_top[1][g0:g1, i] = np.where(idx < p, idx, idx + text_start)  # global column
        for i, layer in enumerate(self.keep if rec.per_head else []):
            block = rec.per_head[layer].numpy()  # (r, H, kw)
            self.per_head[g0:g1, i, :, :p], self.per_head[g0:g1, i, :, cols] = block[..., :p], block[..., p:]

    def mean_rows(self) -> np.ndarray | PairRows:
        """(G, C) fp16: the dense rows, or the kept pairs as ``PairRows`` (never scattered into
        (G, C): a 32k-token text's rows would be 2 GiB)."""
        if self.mean is not None:
            return self.mean
        return PairRows(*self.mean_top, self.c)
