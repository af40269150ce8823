"""Bounded JSON parsing (``o3viz.trace.safejson``): the chunked structure scan agrees with a plain
reference scanner whatever the chunk boundaries, and hostile files are refused in one line."""

from __future__ import annotations

import json
import random

import pytest

from o3viz.errors import TraceError
from o3viz.trace import safejson


def _reference(data: bytes) -> tuple[int, int, int]:
    depth = deepest = values = boxes = 0
    inside = escaped = False
    for ch in data.decode("utf-8", "surrogatepass"):
        if inside:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                inside = False
            continue
        if ch == '"':
            inside = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
            boxes += 1
            values += 1
        elif ch in "]}":
            depth -= 1
        elif ch in ",:":
            values += 1
    return deepest, values, boxes


def _random_json(rng: random.Random, depth: int = 0):
    kind = rng.choice("sldn" if depth < 5 else "sn")
    if kind == "s":
        return "".join(
            rng.choice(['"', "\\", "[", "]", "{", ",", ":", "a", "\\\\", "é"])
            for _ in range(rng.randint(0, 9))
        )
    if kind == "n":
        return rng.choice([0, -3, 2.5, None, True])
    if kind == "l":
        return [_random_json(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {str(rng.random())[:4]: _random_json(rng, depth + 1) for _ in range(rng.randint(0, 4))}


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 64, 1 << 20])
def test_the_chunked_scan_equals_a_plain_scanner_at_any_chunk_size(monkeypatch, chunk):
    monkeypatch.setattr(safejson, "SCAN_CHUNK", chunk)
    rng = random.Random(chunk)
    for _ in range(60):
        data = json.dumps(_random_json(rng), ensure_ascii=rng.random() < 0.5).encode()
        assert safejson.structure(data) == _reference(data), data
        assert safejson.structure(data.decode()) == _reference(data)


def test_a_run_of_backslashes_across_a_chunk_boundary_keeps_its_parity(monkeypatch):
    monkeypatch.setattr(safejson, "SCAN_CHUNK", 4)
    for n in range(0, 9):
        data = json.dumps(["x" + "\\" * n + '"[', [1]]).encode()
        assert safejson.structure(data) == _reference(data)


@pytest.mark.parametrize(
    "data, what",
    [
        (b"[" + b"[]," * 2_000_000 + b"[]]", "lists and objects"),
        (b'{"x": [' + b"0," * 4_000_000 + b"0]}", "JSON values"),
        (b'{"n": ' + b"7" * 5000 + b"}", "5000 digits"),
        (b"[" * 100 + b"]" * 100, "nesting"),
    ],
    ids=["empty-lists", "zeros", "long-integer", "deep"],
)
def test_hostile_json_is_refused_in_one_line(data, what):
    with pytest.raises(TraceError, match=what) as err:
        safejson.loads(data, "(file)")
    assert str(err.value).startswith("(file): ") and "\n" not in str(err.value)


def test_real_json_within_the_bounds_parses_as_json_does():
    text = json.dumps({"a": [1, 2.5, 'x\\"y', {"b": None}], "n": int("9" * 1000)})
    assert safejson.loads(text, "(input)") == json.loads(text)
