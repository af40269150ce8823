"""Inspect's view data files (``pages/common/trace_view.py``) are pruned, least recently used
first: before, every trace and option ever opened left a JSON file in the temp folder for good."""

from __future__ import annotations

import os

from pages.common.trace_view import prune


def _files(folder, n: int, size: int = 10):
    out = []
    for i in range(n):
        f = folder / f"v{i}.json"
        f.write_bytes(b"x" * size)
        os.utime(f, (1_000 + i, 1_000 + i))  # v0 oldest
        out.append(f)
    return out


def test_the_oldest_files_go_first_and_the_new_one_stays(tmp_path):
    files = _files(tmp_path, 6)
    os.utime(files[0], (5_000, 5_000))  # used again just now: kept
    assert prune(tmp_path, keep=files[5], max_files=3) == 3
    assert sorted(f.name for f in tmp_path.glob("*.json")) == ["v0.json", "v4.json", "v5.json"]


def test_a_byte_cap_deletes_the_older_files_past_it(tmp_path):
    files = _files(tmp_path, 4, size=100)
    assert prune(tmp_path, keep=files[3], max_files=100, max_bytes=150) == 3
    assert [f.name for f in tmp_path.glob("*.json")] == ["v3.json"]
