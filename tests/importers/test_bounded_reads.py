"""Issue 38, findings 1, 2 and 6: hostile Parquet and ``.eval`` files, built here, imported in a
child process whose peak memory is measured from outside (``o3viz.testing.peak_rss``). The bound
each test states is per input byte: ``ALLOWANCE + MAX_EXPANSION * file bytes`` (a file may decode
to 64 bytes per byte, at least 64 MiB, see docs/limits.md; what it decodes is held at most about
three times over: Arrow, JSON text, the traces built), where before the fixes these files cost
hundreds of MB for a few KB."""

from __future__ import annotations

import io
import json
import struct
import zipfile

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from o3viz.errors import TraceError
from o3viz.testing.peak_rss import measure_peak
from o3viz.trace.bounded import EXPANSION_FLOOR, MAX_EXPANSION, Budget, read_lines

pytestmark = [pytest.mark.subprocess]

MiB = 1 << 20
ALLOWANCE = 3 * EXPANSION_FLOOR  # the decode budget, held as Arrow, as JSON text and as traces
SETUP = "import sys; from o3viz.cli.main import main"
SAMPLE = {"id": 1, "epoch": 1, "input": "2+2?", "target": "4", "output": {"completion": "4"},
          "messages": [{"role": "assistant", "content": [{"type": "reasoning", "reasoning": "2+2 = 4."}]}]}  # fmt: skip


def _bound(path) -> int:
    return ALLOWANCE + MAX_EXPANSION * path.stat().st_size


def _dictionary_bomb(path, value_mib: int = 8, rows: int = 64):
    """One ``value_mib`` MiB string, dictionary-encoded, referenced by every one of ``rows`` rows."""
    text = pa.DictionaryArray.from_arrays(
        pa.array([0] * rows, pa.int32()), pa.array(["x" * (value_mib * MiB)])
    )
    # without the Arrow schema the column reads back as plain strings: Parquet's dictionary
    # encoding, which a reader decodes densely (the form a red team's file takes)
    pq.write_table(pa.table({"text": text}), path, compression="zstd", store_schema=False)
    return path


def _run(argv: list[str], warm: list[str]):
    """``o3viz ARGV`` in a child (its store is this test's: O3VIZ_HOME is inherited), after ``o3viz
    WARM`` on a small honest file of the same kind, so the baseline holds every import."""
    setup = f"{SETUP}\nassert main({warm!r}) == 0, 'the warm-up import failed'"
    return measure_peak(f"sys.exit(main({argv!r}))", setup=setup)


def _honest_parquet(tmp_path):
    path = tmp_path / "honest.parquet"
    pq.write_table(pa.table({"text": ["2 + 2 = 4. So 4.", "3 + 3 = 6. So 6."]}), path, compression="zstd")
    return path


def _warm_parquet(tmp_path, *, all_: bool) -> list[str]:
    path = _honest_parquet(tmp_path)
    if all_:
        return ["import", str(path), "--all", "--workers", "0", "--dataset", "warm"]
    return ["import", str(path), "--out", str(tmp_path / "warm.o3trace.json")]


@pytest.mark.subprocess
def test_a_parquet_dictionary_bomb_imports_one_record_in_bounded_memory(tmp_path):
    path = _dictionary_bomb(tmp_path / "bomb.parquet")
    assert path.stat().st_size < 4096
    run = _run(
        ["import", str(path), "--out", str(tmp_path / "o.o3trace.json")], _warm_parquet(tmp_path, all_=False)
    )
    # before: the whole row group decoded densely, 64 x 8 MiB = +512 MB for a file of < 4 KB
    assert run.growth < _bound(path), (run.growth >> 20, run.stderr[-300:])


@pytest.mark.subprocess
def test_a_parquet_dictionary_bomb_with_all_stops_at_the_decode_budget(tmp_path):
    path = _dictionary_bomb(tmp_path / "bomb.parquet")
    run = _run(
        ["import", str(path), "--all", "--workers", "0", "--dataset", "bomb"],
        _warm_parquet(tmp_path, all_=True),
    )
    assert run.growth < _bound(path), (run.growth >> 20, run.stderr[-300:])
    assert "decodes to more than" in run.stderr and "Traceback" not in run.stderr


@pytest.mark.subprocess
def test_a_parquet_string_bomb_is_refused_from_its_declared_size(tmp_path):
    path = tmp_path / "string.parquet"
    pq.write_table(pa.table({"text": ["y" * (96 * MiB)]}), path, compression="zstd")
    assert path.stat().st_size < 64 * 1024
    run = _run(
        ["import", str(path), "--all", "--workers", "0", "--dataset", "s"], _warm_parquet(tmp_path, all_=True)
    )
    # before: the 96 MiB string held as Arrow, a Python str and its JSON: +400 MB for ~5 KB
    assert run.growth < _bound(path), (run.growth >> 20, run.stderr[-300:])
    assert run.returncode == 2 and "declares" in run.stderr and "Traceback" not in run.stderr


@pytest.mark.subprocess
def test_an_honest_parquet_file_still_imports_every_row(tmp_path):
    path = tmp_path / "ok.parquet"
    rows = [{"text": f"{i} + {i} = {2 * i}. So {2 * i}."} for i in range(300)]
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=100)
    run = _run(
        ["import", str(path), "--all", "--workers", "0", "--dataset", "ok"],
        _warm_parquet(tmp_path, all_=True),
    )
    assert run.returncode == 0 and "from 300 records" in run.stdout and "0 bad" in run.stdout, run.stderr[
        -300:
    ]


# ---------------------------------------------------------------- .eval archives


def _central_directory_only(path, members: int, declared: int):
    """A zip of ``members`` central-directory entries (no data), whose end record says it has
    ``declared``: zipfile parses the whole directory on open, whatever the count says."""
    entries = bytearray()
    for i in range(members):
        name = f"samples/{i}_epoch_1.json".encode()
        entries += struct.pack(
            "<4s6H3I5H2I", b"PK\x01\x02", 20, 20, 0, 0, 0, 0, 0, 0, 0, len(name), 0, 0, 0, 0, 0, 0
        )
        entries += name
    count = declared
    end = struct.pack("<4s4H2IH", b"PK\x05\x06", 0, 0, count, count, len(entries), 0, 0)
    path.write_bytes(b"PK\x03\x04" + bytes(entries) + end)  # read as an .eval by its magic
    return path


def _honest_eval(path):
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("header.json", json.dumps({"eval": {"task": "t", "model": "m"}}))
        z.writestr("samples/1_epoch_1.json", json.dumps(SAMPLE))
    return path


@pytest.mark.subprocess
def test_an_eval_with_too_many_members_is_refused_before_zipfile_parses_it(tmp_path):
    path = _central_directory_only(tmp_path / "many.eval", 300_000, declared=1000)
    warm = _honest_eval(tmp_path / "honest.eval")
    run = _run(
        ["import", str(path), "--all", "--workers", "0", "--dataset", "m"],
        ["import", str(warm), "--all", "--workers", "0", "--dataset", "w"],
    )
    # before: zipfile parsed all 300,000 entries (+180 MB, seconds) before the count was checked
    assert run.growth < 32 * MiB + 2 * path.stat().st_size, (run.growth >> 20, run.stderr[-300:])
    assert (
        run.returncode == 2 and "too long for 1,000 members" in run.stderr and "Traceback" not in run.stderr
    )


def test_an_eval_declaring_too_many_members_is_refused_from_its_end_record(tmp_path, monkeypatch):
    from o3viz.importers import inspect_log

    monkeypatch.setattr(inspect_log, "MAX_MEMBERS", 50)
    path = _central_directory_only(tmp_path / "many.eval", 60, declared=60)
    with pytest.raises(TraceError, match="more than 50 members"):
        list(inspect_log.eval_samples(path))


def test_an_eval_over_the_archive_size_cap_is_refused_before_it_is_opened(tmp_path, monkeypatch):
    from o3viz.importers import inspect_log

    monkeypatch.setattr(inspect_log, "MAX_EVAL_BYTES", 1000)
    path = tmp_path / "big.eval"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("header.json", "{}" + " " * 5000)
    with pytest.raises(TraceError, match="over the limit of 1,000 for an archive"):
        list(inspect_log.eval_samples(path))


def test_an_eval_with_a_duplicate_sample_name_imports_the_sample_once(tmp_path, capsys):
    from o3viz.cli.main import main

    path = tmp_path / "dup.eval"
    with pytest.warns(UserWarning, match="Duplicate name"), zipfile.ZipFile(path, "w") as z:
        z.writestr("header.json", json.dumps({"eval": {"task": "t", "model": "m"}}))
        z.writestr("samples/1_epoch_1.json", json.dumps(SAMPLE))
        z.writestr("samples/1_epoch_1.json", json.dumps(SAMPLE))
    assert main(["import", str(path), "--all", "--workers", "0", "--dataset", "dup"]) == 0
    out, err = capsys.readouterr()
    assert "1 traces from" in out and "duplicate" in err, (out, err)


# ---------------------------------------------------------------- lines


def test_a_long_line_is_skipped_in_pieces_and_counted():
    data = b'{"a": 1}\n' + b"x" * (3 * MiB) + b"\n{}\n"
    got = [(n, raw is None) for n, raw, _ in read_lines(io.BytesIO(data), limit=MiB)]
    assert got == [(1, False), (2, True), (3, False)]


def test_a_budget_counts_records():
    budget = Budget("f", 10, max_records=2)
    budget.take(1)
    budget.take(1)
    with pytest.raises(TraceError, match="more than 2 records"):
        budget.take(1)
