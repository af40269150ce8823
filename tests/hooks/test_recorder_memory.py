"""Long captures give freed heap memory back periodically (glibc fragmentation otherwise held
~2.8 GB in a 2,048-token capture), and the per-step buffer is reused, not reallocated."""

from __future__ import annotations

import importlib
import os

import pytest
import torch

pytestmark = [pytest.mark.model]

recorder = importlib.import_module("o3viz.hooks.recorder")
TRIM_EVERY, Recorder, RecorderSpec = recorder.TRIM_EVERY, recorder.Recorder, recorder.RecorderSpec


def _step(rec: Recorder, keys: int) -> None:
    for layer in range(2):
        rec.add_decode(layer, torch.full((3, keys), 1.0 / keys), None)
    rec.end_step()


def test_recorder_releases_free_heap_every_trim_interval(monkeypatch):
    calls = []
    monkeypatch.setattr(recorder, "release_free_heap", lambda: calls.append(1))
    rec = Recorder(RecorderSpec(num_layers=2, num_heads=3, prompt_len=4))
    for g in range(3 * TRIM_EVERY):
        _step(rec, 5 + g)
    assert len(calls) == 3 and len(rec.steps_mean) == 3 * TRIM_EVERY


def test_step_rows_are_still_exact_with_a_reused_buffer():
    rec = Recorder(RecorderSpec(num_layers=2, num_heads=3, prompt_len=4))
    for g in range(40):
        _step(rec, 5 + g)
    for g, row in enumerate(rec.steps_mean):
        assert row.shape == (5 + g,)
        assert torch.allclose(row.float(), torch.full((5 + g,), 1.0 / (5 + g)), atol=1e-3)
    assert len(rec._stores) == 1  # one store, grown geometrically, not one buffer per step


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_release_free_heap_gives_freed_pages_back_and_is_safe_for_live_data():
    """Fragment the heap as a long capture does (free most blocks, keep every 100th), then trim:
    resident memory drops by most of what was freed, and the blocks still in use are intact."""
    if recorder._malloc_trim() is None or not os.path.exists("/proc/self/statm"):
        pytest.skip("needs glibc's malloc_trim and /proc (Linux)")
    blocks = [bytearray(b"\0") * 4000 for _ in range(25_000)]  # ~100 MB through malloc, not pymalloc
    kept = blocks[::100]
    for i, b in enumerate(kept):
        b[0] = i % 256
    freed = (len(blocks) - len(kept)) * 4000
    del blocks
    before = _rss()
    assert recorder.release_free_heap() is None
    assert before - _rss() >= freed // 2
    assert all(len(b) == 4000 and b[0] == i % 256 for i, b in enumerate(kept))


def _kept_head_bytes(rec: Recorder) -> int:
    dense = sum(t.numel() * t.element_size() for t in rec.steps_heads)
    return dense + sum(
        v.numel() * v.element_size() + i.numel() * i.element_size() for v, i in rec.steps_heads_top
    )


def _generate(g: int, sparse: bool) -> int:
    """Per-head bytes a recorder keeps after ``g`` decode steps over a growing context."""
    spec = RecorderSpec(
        num_layers=2, num_heads=3, prompt_len=4, keep_layers=[0, 1], top_k=8, sparse_rows=sparse
    )
    rec = Recorder(spec)
    for step in range(g):
        _step(rec, 5 + step)
    return _kept_head_bytes(rec)


def test_a_long_generation_keeps_per_head_rows_linear_in_the_generated_tokens():
    # dense rows as long as the context grow with G² (4x for twice the tokens); top-k pairs with G
    assert 3.5 < _generate(256, sparse=False) / _generate(128, sparse=False) < 4.5
    assert _generate(256, sparse=True) / _generate(128, sparse=True) == 2


def test_top_k_pairs_keep_each_rows_largest_keys_and_pad_short_rows():
    spec = RecorderSpec(num_layers=2, num_heads=3, prompt_len=2, keep_layers=[1], top_k=4, sparse_rows=True)
    rec = Recorder(spec)
    for keys in (2, 6):
        for layer in range(2):
            rows = torch.arange(keys, dtype=torch.float32).expand(3, keys) / keys
            rec.add_decode(layer, rows, None)
        rec.end_step()
    (v0, i0), (v1, i1) = rec.steps_heads_top
    assert i0[0, 0].tolist() == [0, 1, 2, 3] and v0[0, 0, 2:].tolist() == [0, 0]  # all keys, then padding
    assert sorted(i1[0, 0].tolist()) == [2, 3, 4, 5] and rec.steps_heads == []
