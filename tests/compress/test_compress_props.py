"""Property: ``compress_context(x).expand() == x`` byte for byte, on random and real inputs."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from o3viz.compress.context import CompressionConfig, compress_context
from o3viz.compress.repeats import tokenize_regex
from o3viz.paths import data_dir

DATA = data_dir()
# pieces that stress the pointer syntax, escaping, whitespace and unicode
ATOMS = [
    "⟦",
    "⟧",
    "=",
    "~",
    "§",
    "-",
    "12",
    "0",
    "⟦=§0⟧",
    "⟦~§1⟧",
    "⟦=§0-1⟧",
    "⟦⟦",
    " ",
    "\n",
    "\n\n",
    "\t",
    "the",
    "apples",
    "cost",
    "$3",
    ".",
    "é",
    "雪",
    "\r\n",
    "A",
    "B",
]
SMALL = CompressionConfig(min_repeat_tokens=2, min_segment_tokens=1, shingle=1, num_perm=8, bands=4)

lines = st.lists(st.sampled_from(ATOMS), min_size=0, max_size=12).map("".join)
repetitive = st.lists(lines, min_size=1, max_size=6).flatmap(
    lambda pool: st.lists(st.sampled_from(pool), min_size=0, max_size=30).map("\n".join)
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(repetitive, st.booleans())
def test_expand_inverts_compress_on_repetitive_random_text(text, small):
    ctx = compress_context(text, config=SMALL if small else None)
    assert ctx.expand() == text


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=400))
def test_expand_inverts_compress_on_arbitrary_unicode(text):
    assert compress_context(text, config=SMALL).expand() == text


@settings(max_examples=60, deadline=None)
@given(repetitive, st.text(alphabet="abcdef ?", max_size=20), st.floats(0.0, 1.0))
def test_expand_inverts_compress_for_any_question_and_weight(text, question, weight):
    cfg = CompressionConfig(redundancy_weight=weight, min_segment_tokens=1, min_repeat_tokens=2)
    first = compress_context(text, config=cfg)
    again = compress_context(text, config=cfg, question=question, previous=first)
    assert first.expand() == text and again.expand() == text


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x2FF), max_size=200))
def test_numpy_tokenizer_matches_the_regex(text):
    got = tokenize_regex(text)
    want = [(m.start(), m.end()) for m in re.finditer(r"\w+|[^\w\s]", text)]
    assert list(zip(got.starts.tolist(), got.ends.tolist(), strict=True)) == want
    words = [m.group() for m in re.finditer(r"\w+|[^\w\s]", text)]
    ids = got.ids.tolist()
    assert all((words[i] == words[j]) == (ids[i] == ids[j]) for i in range(len(ids)) for j in range(i))


def _real_texts() -> list[str]:
    traces = DATA / "traces"
    texts = [p.read_text(encoding="utf-8") for p in sorted((traces / "thinking_texts").glob("*.txt"))]
    rows = [json.loads(x) for x in (traces / "topology_pilot_math500_r1.jsonl").read_text().splitlines() if x]
    texts += [r["full_response"] for r in rows]
    gsm = [
        json.loads(x)["answer"] for x in (DATA / "gsm8k" / "gsm8k_test.jsonl").read_text().splitlines()[:200]
    ]
    texts.append("\n\n".join(gsm * 3))  # repeated solutions: many pointers, range pointers and near copies
    return texts


def test_expand_inverts_compress_on_real_data():
    if not (DATA / "traces").is_dir():
        pytest.skip(f"shared data not found at {DATA}")
    texts = _real_texts()
    compressed = 0
    for text in texts:
        ctx = compress_context(text)
        assert ctx.expand() == text
        compressed += len(ctx.pointers)
    assert compressed > 50  # the real inputs do exercise pointers


@settings(max_examples=20, deadline=None)
@given(st.data())
def test_expand_inverts_compress_on_real_data_slices(data):
    if not (DATA / "traces").is_dir():
        pytest.skip(f"shared data not found at {DATA}")
    text = data.draw(st.sampled_from(_REAL)) if _REAL else ""
    a = data.draw(st.integers(0, len(text)))
    b = data.draw(st.integers(a, min(len(text), a + 5000)))
    piece = text[a:b] + text[a:b]
    assert compress_context(piece, config=SMALL).expand() == piece


_REAL = _real_texts()[:25] if (DATA / "traces").is_dir() else []
