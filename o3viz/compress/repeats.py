"""Pattern recognition before the model: tokenizing, segmenting, and finding repeats in near-linear
time with numpy.

- Exact repeats: every window of ``m`` consecutive tokens gets a 64-bit polynomial hash (``m``
  vectorized passes, uint64 wrap-around arithmetic). One ``np.unique`` sort (O(n log n)) gives
  each window the first position with the same hash; a token is *covered* when some window
  containing it occurred earlier. Collisions are ruled out by comparing the token ids of the
  two windows (again ``m`` vectorized passes).
- Near-duplicates: each segment gets a MinHash signature over its token 3-shingles (``num_perm``
  multiply-xorshift hash functions, ``np.minimum.reduceat`` per segment). LSH banding proposes
  earlier candidates; the share of agreeing signature rows estimates the shingle Jaccard.

Nothing here loops over tokens in Python except building the vocabulary (a dict lookup per token).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

# A cheap tokenizer for when no model tokenizer is given: words, and single non-space characters.
# Whitespace is not a token; segment text keeps it, so losslessness never depends on tokenization.
_REGEX_TOKEN = re.compile(r"\w+|[^\w\s]")
_LINE = re.compile(r"[^\n]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[$\\])")
_MASK = np.uint64(0xFFFFFFFFFFFFFFFF)
_BASE = np.uint64(0x100000001B3)  # FNV prime: odd, so the polynomial hash is a bijection per step


@dataclass
class Tokens:
    """A tokenization with char offsets: ``ids`` (n,) int64 and ``starts``/``ends`` (n,) int64."""

    ids: np.ndarray
    starts: np.ndarray
    ends: np.ndarray

    def __len__(self) -> int:
        return len(self.ids)


def _char_classes(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(n,) bool "word char" (alphanumeric or ``_``) and (n,) bool "space" per code point."""
    word = np.zeros(len(codes), dtype=bool)
    space = np.zeros(len(codes), dtype=bool)
    ascii_ = codes < 128
    table = np.array([chr(c).isalnum() or chr(c) == "_" for c in range(128)])
    spaces = np.array([chr(c).isspace() for c in range(128)])
    word[ascii_] = table[codes[ascii_]]
    space[ascii_] = spaces[codes[ascii_]]
    other = ~ascii_
    if other.any():  # classify each distinct non-ASCII code point once
        uniq, inv = np.unique(codes[other], return_inverse=True)
        chars = [chr(c) if c < 0x110000 else "\x00" for c in uniq.tolist()]
        word[other] = np.array([c.isalnum() for c in chars])[inv]
        space[other] = np.array([c.isspace() for c in chars])[inv]
    return word, space


def tokenize_regex(text: str) -> Tokens:
    """Words (runs of alphanumerics and ``_``) and single other non-space characters, i.e. the
    regex ``\\w+|[^\\w\\s]``, computed with numpy in O(n). A token's id is a 64-bit hash of its
    characters (prefix-hash difference times an inverse power of the odd base), so equal
    tokens get equal ids without a Python dict."""
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.uint64)
    n = len(codes)
    if n == 0:
        empty = np.zeros(0, dtype=np.int64)
        return Tokens(empty, empty.copy(), empty.copy())
    word, space = _char_classes(codes)
    prev_word = np.concatenate([[False], word[:-1]])
    next_word = np.concatenate([word[1:], [False]])
    starts = np.flatnonzero((word & ~prev_word) | (~word & ~space))
    ends = np.flatnonzero((word & ~next_word) | (~word & ~space)) + 1
    with np.errstate(over="ignore"):
        powers = _powers(_BASE, n)
        prefix = np.concatenate([[np.uint64(0)], np.cumsum(_mix(codes + np.uint64(1)) * powers)])
        inverse = _powers(_inverse_odd(_BASE), n)
        ids = (prefix[ends] - prefix[starts]) * inverse[starts]
    return Tokens(ids.view(np.int64), starts.astype(np.int64), ends.astype(np.int64))


def _powers(base: np.uint64, n: int) -> np.ndarray:
    """(n,) uint64 base**0 .. base**(n-1) modulo 2**64."""
    with np.errstate(over="ignore"):
        p = np.cumprod(np.full(n, base, dtype=np.uint64))
    return np.concatenate([[np.uint64(1)], p[:-1]])


def _inverse_odd(a: np.uint64) -> np.uint64:
    """The inverse of an odd number modulo 2**64 (Newton iteration)."""
    a_int, x = int(a), 1
    for _ in range(7):
        x = (x * (2 - a_int * x)) % (1 << 64)
    return np.uint64(x)


def tokenize_with(tokenizer, text: str) -> Tokens:
    """A Hugging Face fast tokenizer's ids and offsets (no special tokens)."""
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    ids = np.asarray(enc["input_ids"], dtype=np.int64)
    offs = np.asarray(enc["offset_mapping"], dtype=np.int64).reshape(-1, 2)
    return Tokens(ids, offs[:, 0].copy(), offs[:, 1].copy())


def split_segments(text: str, max_chars: int = 2000) -> list[tuple[int, int]]:
    """``[start, end)`` segments: non-empty lines, or sentences when the text has no line break
    (and within lines longer than ``max_chars``). Leading/trailing blanks stay in the gaps."""
    lines = [(m.start(), m.end()) for m in _LINE.finditer(text)] if "\n" in text else [(0, len(text))]
    out: list[tuple[int, int]] = []
    for s, e in lines:
        pieces = [(s, e)]
        if "\n" not in text or e - s > max_chars:
            pieces, pos = [], s
            for m in _SENTENCE_END.finditer(text, s, e):
                pieces.append((pos, m.start()))
                pos = m.end()
            pieces.append((pos, e))
        for a, b in pieces:
            while a < b and text[a].isspace():
                a += 1
            while b > a and text[b - 1].isspace():
                b -= 1
            if b > a:
                out.append((a, b))
    return out


def window_hashes(ids: np.ndarray, m: int) -> np.ndarray:
    """(n - m + 1,) uint64 polynomial hash of every window of ``m`` token ids."""
    n = len(ids)
    if n < m:
        return np.zeros(0, dtype=np.uint64)
    x = (ids.astype(np.int64).view(np.uint64) * np.uint64(0x9E3779B97F4A7C15)) ^ np.uint64(0x5BD1E995)
    h = np.zeros(n - m + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(m):
            h = h * _BASE + x[j : n - m + 1 + j]
    return h


def covered_tokens(ids: np.ndarray, m: int) -> np.ndarray:
    """(n,) bool: token i lies in a window of ``m`` tokens that already occurred earlier."""
    n = len(ids)
    h = window_hashes(ids, m)
    if len(h) == 0:
        return np.zeros(n, dtype=bool)
    _, first, inverse = np.unique(h, return_index=True, return_inverse=True)
    first_pos = first[inverse]  # earliest window with the same hash
    pos = np.arange(len(h))
    repeat = first_pos < pos
    for j in range(m):  # rule out hash collisions: the windows' ids must match exactly
        repeat &= ids[first_pos + j] == ids[pos + j]
    delta = np.zeros(n + 1, dtype=np.int64)
    starts = pos[repeat]
    np.add.at(delta, starts, 1)
    np.add.at(delta, starts + m, -1)
    return np.cumsum(delta[:n]) > 0


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64 finalizer: a cheap, well-spread uint64 -> uint64 hash."""
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def minhash_signatures(ids: np.ndarray, seg_tok: np.ndarray, shingle: int, num_perm: int, seed: int = 0):
    """(S, num_perm) uint64 MinHash of each segment's token shingles, and (S,) bool "has shingles".

    ``seg_tok`` is (S, 2) token ranges. A segment shorter than ``shingle`` tokens has no signature.
    """
    S = len(seg_tok)
    sig = np.full((S, num_perm), _MASK, dtype=np.uint64)
    h = window_hashes(ids, shingle)
    counts = np.maximum(seg_tok[:, 1] - seg_tok[:, 0] - shingle + 1, 0)
    valid = counts > 0
    if not valid.any():
        return sig, valid
    # shingles of a segment are windows starting inside it and ending inside it
    c = counts[valid]
    offsets = np.concatenate([[0], np.cumsum(c)[:-1]])
    idx = np.arange(c.sum()) + np.repeat(seg_tok[valid, 0] - offsets, c)  # every shingle start, per segment
    rng = np.random.default_rng(seed)
    salts = rng.integers(1, 2**63, size=num_perm, dtype=np.uint64)
    for p in range(num_perm):  # num_perm vectorized passes over all shingles
        v = _mix(h[idx] ^ salts[p])
        sig[valid, p] = np.minimum.reduceat(v, offsets)
    return sig, valid


def near_duplicate_sources(sig: np.ndarray, valid: np.ndarray, bands: int) -> tuple[np.ndarray, np.ndarray]:
    """For each segment, the earlier segment whose signature agrees most (-1 if none) and the
    agreement (estimated Jaccard of shingle sets). Candidates share an LSH band with it."""
    S, P = sig.shape
    rows = P // bands
    cands = np.full((S, bands), -1, dtype=np.int64)
    for b in range(bands):
        band = sig[:, b * rows : (b + 1) * rows]
        key = band[:, 0].copy()
        with np.errstate(over="ignore"):
            for r in range(1, rows):
                key = _mix(key ^ band[:, r])
        key[~valid] = np.arange((~valid).sum(), dtype=np.uint64)  # never match
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        f = first[inverse]
        cands[:, b] = np.where((f < np.arange(S)) & valid, f, -1)
    agree = np.zeros((S, bands))
    for b in range(bands):
        c = cands[:, b]
        ok = c >= 0
        agree[ok, b] = (sig[ok] == sig[c[ok]]).mean(axis=1)
    best = agree.argmax(axis=1)
    source = cands[np.arange(S), best]
    return source, np.where(source >= 0, agree[np.arange(S), best], 0.0)
