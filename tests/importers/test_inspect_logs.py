"""Inspect AI logs: files written by the real inspect_ai package (mockllm, no network) import as one
trace per sample, the reasoning blocks as steps and the scorer's verdict as the source's grade,
from the ``.eval`` zip and the ``.json`` log alike; hostile files end in one line, with the
decompressed size capped while it is read."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tracemalloc
import zipfile

import pytest

from o3viz.cli.main import main
from o3viz.errors import TraceError
from o3viz.importers import detect_format, import_trace, inspect_log
from o3viz.paths import REPO_ROOT
from o3viz.store.query import Query
from o3viz.store.store import Store


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    pytest.importorskip("inspect_ai")
    out = tmp_path_factory.mktemp("inspect")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "INSPECT_LOG_DIR": str(out / "logs")}
    subprocess.run(
        [sys.executable, "-m", "o3viz.testing.inspect_logs", str(out)], env=env, check=True, timeout=300
    )
    return out / "run.eval", out / "run.json"


@pytest.mark.subprocess
def test_eval_log_is_one_trace_per_sample_with_reasoning_blocks_as_steps(logs):
    ev, _ = logs
    assert detect_format(ev) == "inspect_ai"
    right, wrong = import_trace(ev, record=0), import_trace(ev, record=1)
    assert [s.text for s in right.steps[:2]] == [
        "17*23 = 17*20 + 17*3.",
        "17*20 = 340 and 17*3 = 51, so 340 + 51 = 391.",
    ]
    assert (
        right.final.answer == "391"
        and right.task.question == "What is 17*23?"
        and right.task.reference == "391"
    )
    assert (
        right.info["file_is_correct"] is True and wrong.info["file_is_correct"] is False
    )  # the scorer's grade
    meta = right.info["source_info"]
    assert (meta["task"], meta["scorer"], meta["score"], meta["sample_id"]) == ("arith", "match", "C", "1")
    assert right.provenance.model_id == "mockllm/model" and right.provenance.source["record"] == 1
    assert wrong.final.checks[-1].verdict == "wrong"  # o3viz's own check agrees with the scorer


def test_json_log_imports_the_same_traces_as_the_eval_zip(logs):
    ev, js = logs
    assert detect_format(js) == "inspect_ai"
    for r in (0, 1):
        a, b = import_trace(ev, record=r), import_trace(js, record=r)
        assert [s.text for s in a.steps] == [s.text for s in b.steps]
        assert (a.final.answer, a.info["file_is_correct"]) == (b.final.answer, b.info["file_is_correct"])


@pytest.mark.parametrize("which", [0, 1])
def test_cli_imports_every_sample_of_a_log_into_one_dataset(logs, which, capsys):
    src = logs[which]
    assert main(["import", str(src), "--all", "--dataset", "arith_run", "--workers", "0"]) == 0
    assert "2 traces from 2 records into dataset 'arith_run'" in capsys.readouterr().out
    assert Store().count(Query(dataset=["arith_run"])) == 2


# ---------------------------------------------------------------- hostile files


def _eval_zip(path, members: dict[str, bytes], method=zipfile.ZIP_DEFLATED):
    with zipfile.ZipFile(path, "w", method) as z:
        z.writestr("header.json", json.dumps({"eval": {"task": "t", "model": "m"}}))
        for name, data in members.items():
            z.writestr(name, data)
    return path


def _as_zstd(path, name: str):
    """Mark a stored member as zstd (method 93) in both headers, as inspect_ai writes them."""
    data = bytearray(path.read_bytes())
    for sig, off in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):
        i = 0
        while (i := data.find(sig, i)) >= 0:
            n = 30 if sig == b"PK\x03\x04" else 46
            fname_at = i + n
            ln = int.from_bytes(data[i + (26 if n == 30 else 28) : i + (28 if n == 30 else 30)], "little")
            if bytes(data[fname_at : fname_at + ln]) == name.encode():
                data[i + off : i + off + 2] = (93).to_bytes(2, "little")
            i += 4
    path.write_bytes(bytes(data))


def _one_line_error(capsys, argv) -> str:
    assert main(argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("o3viz: error:"), lines
    return lines[0]


def test_a_deflate_bomb_is_refused_from_its_declared_size(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(inspect_log, "MAX_MEMBER_BYTES", 1 << 20)
    bomb = _eval_zip(tmp_path / "bomb.eval", {"samples/1_epoch_1.json": b"0" * (8 << 20)})
    assert "over the limit" in _one_line_error(
        capsys, ["import", str(bomb), "--out", str(tmp_path / "o.o3trace.json")]
    )


def test_a_zstd_bomb_stops_at_the_cap_in_bounded_memory(tmp_path, monkeypatch):
    zstandard = pytest.importorskip("zstandard")
    cap = 4 << 20
    monkeypatch.setattr(inspect_log, "MAX_MEMBER_BYTES", cap)
    packed = zstandard.ZstdCompressor().compress(b"{" + b" " * (200 << 20))  # 200 MB in ~6 KB
    path = _eval_zip(tmp_path / "z.eval", {"samples/1_epoch_1.json": packed}, zipfile.ZIP_STORED)
    _as_zstd(
        path, "samples/1_epoch_1.json"
    )  # its declared size is the small packed one: only the read cap holds
    tracemalloc.start()
    with pytest.raises(TraceError, match="decompresses to more than"):
        import_trace(path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 4 * cap


def test_bad_json_members_skip_one_line_each_and_the_good_ones_import(tmp_path, capsys):
    good = json.dumps(
        {
            "id": 1,
            "epoch": 1,
            "input": "2+2?",
            "target": "4",
            "messages": [{"role": "assistant", "content": [{"type": "reasoning", "reasoning": "2+2 = 4."}]}],
            "output": {"completion": "4"},
            "scores": {"match": {"value": "C"}},
        }
    )
    members = {
        "samples/1_epoch_1.json": good,
        "samples/2_epoch_1.json": b"{broken",
        "samples/3_epoch_1.json": b"[1]",
    }
    path = _eval_zip(tmp_path / "mixed.eval", members)
    assert main(["import", str(path), "--all", "--dataset", "mixed", "--workers", "0"]) == 0
    cap = capsys.readouterr()
    assert "1 traces from 3 records" in cap.out
    errors = cap.err.strip().splitlines()
    assert len(errors) == 2 and "not valid JSON" in errors[0] and "not a sample" in errors[1]


@pytest.mark.parametrize(
    "content, says",
    [
        (b"PK\x03\x04" + b"\x00" * 200, "not a readable .eval zip"),
        (None, "without header.json"),
    ],
)
def test_a_broken_or_foreign_zip_is_one_line(tmp_path, capsys, content, says):
    path = tmp_path / "x.eval"
    if content is None:
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("readme.txt", "hello")
    else:
        path.write_bytes(content)
    assert says in _one_line_error(capsys, ["import", str(path), "--out", str(tmp_path / "o.o3trace.json")])
    assert says in _one_line_error(capsys, ["import", str(path), "--all", "--workers", "0"])


def test_too_many_members_is_refused_before_reading_any(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(inspect_log, "MAX_MEMBERS", 5)
    path = _eval_zip(tmp_path / "many.eval", {f"samples/{i}_epoch_1.json": b"{}" for i in range(10)})
    assert "more than 5 members" in _one_line_error(capsys, ["import", str(path), "--all", "--workers", "0"])


def test_zip_bytes_in_memory_are_not_mistaken_for_text():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("header.json", "{}")
    with pytest.raises(TraceError, match="binary"):
        import_trace(buf.getvalue())
