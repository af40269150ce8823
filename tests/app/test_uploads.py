"""Uploads are recognised before they are accepted, and the server never parses them: the worker
stages a dataset (counting under its budget and a decompressed-size cap) or stores the trace
itself; what the store already holds is named and nothing is added (issues 22.4-5, 23.8-9)."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import textwrap

import pytest

from o3viz.app.messages import explain_load_error
from o3viz.app.uploads import stage_dataset, take_upload_in_worker
from o3viz.paths import REPO_ROOT
from o3viz.store.store import Store
from o3viz.testing.datasets import write_reasoning_jsonl
from o3viz.testing.synthetic import make_trace
from o3viz.trace import trace_bytes

pytestmark = [pytest.mark.subprocess]

TEXT = b"<think>First, 2 + 2 = 4. Then 4 * 3 = 12.</think>The answer is 12."


def test_random_bytes_named_json_are_not_json_in_one_line_and_offer_no_import_all(tmp_path):
    store = Store(tmp_path / "store")
    up = take_upload_in_worker(store, "random.json", os.urandom(200_000))
    assert up.dataset is None and up.records == 0 and up.key is None
    line = explain_load_error(up.error).line
    assert line.startswith("random.json: not JSON: ") and "\n" not in line
    assert store.count() == 0 and not list((store.root / "incoming").glob("*"))


def test_a_json_document_without_reasoning_text_is_refused_saying_what_was_expected(tmp_path):
    store = Store(tmp_path / "store")
    up = take_upload_in_worker(store, "big.json", json.dumps("x " * 2_500_000).encode())
    line = explain_load_error(up.error).line
    assert up.key is None and store.count() == 0
    assert line.startswith("big.json: not JSON that holds reasoning: found a JSON string")
    assert "expected an object with the reasoning text" in line and len(line) < 300


def test_the_same_text_uploaded_twice_is_already_in_the_library_and_adds_nothing(tmp_path):
    store = Store(tmp_path / "store")
    first = take_upload_in_worker(store, "thinking.txt", TEXT)
    again = take_upload_in_worker(store, "thinking (1).txt", TEXT)
    assert first.added and not again.added and again.key == first.key
    assert store.count() == 1
    assert again.message().startswith("thinking (1).txt is already in the library as “thinking.txt” (import")
    assert "nothing was added" in again.message()


def test_re_uploading_a_sample_names_the_sample_and_creates_nothing(tmp_path):
    store = Store(tmp_path / "store")
    sample = tmp_path / "s.o3trace.json.gz"
    make_trace(6, seed=2).save(sample)
    key = store.add_file(sample, source="sample")
    up = take_upload_in_worker(store, "copy.o3trace.json.gz", sample.read_bytes())
    assert up.key == key and not up.added and "“s.o3trace.json.gz” (sample" in up.message()
    plain = trace_bytes(make_trace(4, seed=3))  # a plain-JSON trace file, twice
    a = take_upload_in_worker(store, "p.o3trace.json", plain)
    b = take_upload_in_worker(store, "p2.o3trace.json", plain)
    assert a.added and not b.added and b.key == a.key and store.count() == 2


def test_a_dataset_upload_is_counted_in_the_worker(tmp_path):
    store = Store(tmp_path / "store")
    data = write_reasoning_jsonl(tmp_path / "toy.jsonl", 6).read_bytes()
    up = take_upload_in_worker(store, "toy.jsonl", data)
    assert up.records == 6 and up.dataset is not None and up.dataset.is_file() and store.count() == 0


def test_a_pretty_printed_json_document_is_one_upload_not_a_dataset_of_its_lines(tmp_path):
    rec = {"question": "What is 4 * 3?", "response": TEXT.decode()}
    data = json.dumps(rec, indent=2).encode()
    assert stage_dataset(Store(tmp_path / "s"), "one.json", data) is None


def _gzip_expanding_to(n_bytes: int) -> bytes:
    """A gzip of JSONL records that expands to at least ``n_bytes`` (concatenated members)."""
    line = json.dumps({"question": "q", "response": "2 + 2 = 4. " * 300}).encode() + b"\n"
    member = gzip.compress(line * ((16 << 20) // len(line)), compresslevel=9, mtime=0)
    return member * (n_bytes // (16 << 20) + 1)


def test_a_small_gz_that_expands_past_the_cap_is_refused_in_one_line_by_the_worker(tmp_path):
    from o3viz.app.uploads import MAX_DATASET_EXPANDED

    data = _gzip_expanding_to(MAX_DATASET_EXPANDED + (64 << 20))
    assert len(data) < 8 << 20  # a few MB on the wire
    store = Store(tmp_path / "store")
    up = take_upload_in_worker(store, "huge.jsonl.gz", data, budget_s=120)
    assert up.dataset is None and up.records == 0
    assert "expands to more than 1,073,741,824 bytes" in up.error and "\n" not in up.error
    assert not list((store.root / "incoming").glob("*"))


_MEASURE = textwrap.dedent(
    """
    import resource, sys
    from o3viz.app.uploads import take_upload_in_worker
    from o3viz.store.store import Store
    data = sys.stdin.buffer.read()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    up = take_upload_in_worker(Store(sys.argv[1]), "big.o3trace.json.gz", data, budget_s=120)
    assert up.added, up.error
    print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)
    """
)


def test_the_server_side_peak_of_an_upload_does_not_grow_with_what_the_file_expands_to(tmp_path):
    # 60 KB of gzip that expands to ~12 MB of JSON (40,000 tokens): parsing it costs ~300 MB of
    # objects, which the worker pays; the process that called it (the server) stays flat.
    d = make_trace(5, seed=1).to_dict()
    d["rounds"][0]["tokens"] = [d["rounds"][0]["tokens"][0]] * 40_000
    data = gzip.compress(json.dumps(d).encode(), mtime=0)
    assert len(data) < 200_000
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(tmp_path / "store")],
        input=data,
        capture_output=True,
        env=env,
        timeout=300,
        check=True,
    )
    grew_mb = int(out.stdout.split()[-1])
    assert grew_mb < 60, f"the server-side peak grew by {grew_mb} MB"
