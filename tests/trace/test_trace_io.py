"""The trace file contract: save → load → ==, atomic writes, and one TraceError for bad input."""

from __future__ import annotations

import base64
import gzip
import json
import zlib

import numpy as np
import pytest

from o3viz.errors import TraceError
from o3viz.testing.builders import small_trace as make_trace
from o3viz.trace import (
    Trace,
    load_trace,
    save_trace,
    trace_bytes,
)
from o3viz.trace.codec import decode_array, encode_array


def test_save_then_load_gives_an_equal_trace(tmp_path):
    t = make_trace()
    for name in ("a.o3trace.json", "a.o3trace.json.gz"):
        path = save_trace(t, tmp_path / name)
        assert load_trace(path) == t
        assert Trace.load(path.read_bytes()) == t


def test_save_refuses_to_overwrite_and_leaves_no_temp_files(tmp_path):
    t = make_trace()
    path = t.save(tmp_path / "b.o3trace.json")
    before = path.read_bytes()
    with pytest.raises(FileExistsError):
        t.save(path)
    assert path.read_bytes() == before
    t.save(path, overwrite=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.o3trace.json"]


def test_save_rejects_a_wrong_suffix(tmp_path):
    with pytest.raises(TraceError, match="o3trace"):
        make_trace().save(tmp_path / "x.json")


def test_arrays_are_stored_as_base64_not_float_lists():
    raw = trace_bytes(make_trace()).decode()
    assert '"dtype":"float16"' in raw
    assert "0.1111" not in raw


def _assert_trace_error(data, match: str | None = None):
    """One ``TraceError`` with a one-line message. How fast it comes is ``python -m benchmarks
    trace_io``'s figure, not a timed test (under load a timing assert is flaky)."""
    with pytest.raises(TraceError, match=match) as info:
        load_trace(data)
    assert "\n" not in str(info.value)
    return info.value


def _good() -> dict:
    return make_trace().to_dict()


def test_truncated_file_gives_trace_error():
    raw = trace_bytes(make_trace())
    _assert_trace_error(raw[: len(raw) // 2], "not valid JSON")
    _assert_trace_error(gzip.compress(raw)[:100], "gzip")


def test_wrong_types_name_the_field():
    d = _good()
    d["rounds"][0]["tokens"][1]["logprob"] = "high"
    _assert_trace_error(json.dumps(d).encode(), r"rounds\[0\]\.tokens\[1\]\.logprob")
    d = _good()
    d["rounds"] = {"0": 1}
    _assert_trace_error(json.dumps(d).encode(), "rounds: must be a list")
    _assert_trace_error(b"[1, 2]", "must be a JSON object")


def test_unknown_schema_version_is_rejected():
    d = _good()
    d["schema_version"] = 99
    _assert_trace_error(json.dumps(d).encode(), "schema_version")


def test_300_mb_file_is_rejected_before_reading(tmp_path):
    path = tmp_path / "big.o3trace.json"
    with path.open("wb") as f:  # sparse: costs no disk
        f.truncate(300 * 1024 * 1024)
    _assert_trace_error(path, "exceeds the limit")


def test_deep_nesting_is_rejected_without_recursion_error():
    _assert_trace_error(b"[" * 100_000 + b"]" * 100_000, "nesting")
    d = _good()
    d["info"] = {"x": json.loads("[" * 70 + "]" * 70)}
    _assert_trace_error(json.dumps(d).encode(), "nesting")


def test_nan_and_infinity_are_rejected():
    raw = json.dumps(_good())
    _assert_trace_error(raw.replace('"confidence": 0.8', '"confidence": NaN').encode(), "finite")
    _assert_trace_error(raw.replace('"confidence": 0.8', '"confidence": Infinity').encode(), "finite")
    d = _good()
    d["rounds"][0]["attention"]["mean"] = encode_array(np.full((5, 9), np.nan, dtype=np.float16))
    _assert_trace_error(json.dumps(d).encode(), r"attention\.mean\.data: must be finite")


def test_gzip_bomb_stops_at_the_limit():
    # 10,000 gzip members of 1 MiB of zeros each: 10 GiB when expanded, ~10 MB on disk.
    member = gzip.compress(b"\0" * (1 << 20), compresslevel=9)
    bomb = member * 10_240
    assert len(bomb) < 50 * 1024 * 1024
    _assert_trace_error(bomb, "decompresses to more than")


def test_array_whose_length_disagrees_with_its_shape():
    d = _good()
    arr = d["rounds"][0]["attention"]["mean"]
    arr["shape"] = [5, 10]
    _assert_trace_error(json.dumps(d).encode(), "holds 45 values but shape")
    with pytest.raises(TraceError, match="not valid base64"):
        decode_array({"dtype": "float16", "shape": [2], "data": "!!!!"}, "x")


def test_offsets_outside_the_text_are_rejected():
    d = _good()
    d["rounds"][0]["steps"][0]["end"] = 10_000
    _assert_trace_error(json.dumps(d).encode(), "outside the text")


def test_hostile_input_never_raises_raw_errors():
    d = _good()
    for bad in ([], None, 3, "x", {"schema_version": 1}, {"schema_version": True}):
        with pytest.raises(TraceError):
            load_trace(json.dumps(bad).encode())
    d["rounds"][0]["decision_points"][0]["alternatives"] = [1, 2]
    with pytest.raises(TraceError):
        load_trace(json.dumps(d).encode())


def test_array_codec_round_trips_every_dtype():
    for dtype in ("float16", "float32", "int32", "int64", "uint8", "bool"):
        a = (np.arange(12) % 3).astype(dtype).reshape(3, 4)
        b = decode_array(encode_array(a), "a")
        assert b.dtype == a.dtype and np.array_equal(a, b)
    assert base64.b64decode(encode_array(np.zeros(2, np.float32))["data"]) == b"\0" * 8
    assert zlib  # imported for the bomb's helpers


def test_saved_file_gets_ordinary_permissions(tmp_path):
    import os
    import stat

    old = os.umask(0o022)
    try:
        path = make_trace().save(tmp_path / "p.o3trace.json")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_reading_final_does_not_change_the_trace():
    from o3viz.trace import Task

    t = Trace(Task("q?"))
    assert t.final.text == "" and t.steps == [] and t.attention is None
    assert t.rounds == [] and t == Trace(Task("q?"))
    full = make_trace()
    assert full.final is full.rounds[-1]


def test_saving_over_an_existing_file_is_a_one_line_o3viz_error(tmp_path):
    from o3viz.errors import O3vizError
    from o3viz.trace.files import OutputExistsError

    path = make_trace().save(tmp_path / "t.o3trace.json")
    with pytest.raises(OutputExistsError) as err:  # was a plain FileExistsError: a CLI traceback
        make_trace().save(path)
    assert isinstance(err.value, O3vizError) and isinstance(err.value, FileExistsError)


def test_overwrite_replaces_only_a_regular_file_never_a_link_or_a_fifo(tmp_path):
    import os

    from o3viz.errors import O3vizError
    from o3viz.trace.files import write_atomic

    victim = tmp_path / "victim"
    victim.write_text("keep")
    link = tmp_path / "link.bin"
    link.symlink_to(victim)
    fifo = tmp_path / "pipe.bin"
    os.mkfifo(fifo)
    for path, kind in ((link, "symbolic link"), (fifo, "FIFO")):
        with pytest.raises(O3vizError, match=kind):
            write_atomic(path, b"data", overwrite=True)
    assert link.is_symlink() and victim.read_text() == "keep" and fifo.exists()
    assert write_atomic(victim, b"new", overwrite=True).read_bytes() == b"new"


def test_a_synthetic_trace_built_positionally_keeps_attention_info_and_round_trips(tmp_path):
    """AttentionRecord's optional ``steer`` field comes last, so records built positionally
    (``info`` right after ``daa``) keep their meaning and the trace still saves and loads."""
    from o3viz.testing.synthetic import make_trace

    t = make_trace(steps=4, seed=3)
    att = t.final.attention
    assert att is not None and att.info == {"synthetic": True} and att.steer is None
    assert load_trace(t.save(tmp_path / "s.o3trace.json.gz")) == t
