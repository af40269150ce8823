"""``python -m o3viz info``: the summary, and one-line errors with exit code 2 on bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from o3viz.testing.builders import small_trace as make_trace
from o3viz.trace import SCHEMA_VERSION

pytestmark = [pytest.mark.model, pytest.mark.subprocess]


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "o3viz", *args], capture_output=True, text=True, timeout=120)


def test_info_json_prints_counts_verdicts_size_and_schema(tmp_path):
    path = make_trace().save(tmp_path / "t.o3trace.json")
    out = run_cli("info", str(path), "--json")
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout)
    assert info["tokens"] == 5 and info["steps"] == 2 and info["decision_points"] == 1
    assert info["verdicts"] == {"correct": 1} and info["schema_version"] == SCHEMA_VERSION
    assert info["file_bytes"] == path.stat().st_size and info["daa_mode"] == "observe"


def test_info_text_output_is_readable(tmp_path):
    path = make_trace().save(tmp_path / "t.o3trace.json.gz")
    out = run_cli("info", str(path))
    assert out.returncode == 0 and "tokens" in out.stdout and "schema_version" in out.stdout


def test_bad_input_exits_2_with_one_line_and_no_traceback(tmp_path):
    bad = tmp_path / "bad.o3trace.json"
    bad.write_text('{"schema_version": 1, "task": 5}')
    for args in (["info", str(bad)], ["info", str(tmp_path / "missing.o3trace.json")], ["no-such-command"]):
        out = run_cli(*args)
        assert out.returncode == 2
        assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_help_lists_the_commands():
    out = run_cli("--help")
    assert out.returncode == 0 and "info" in out.stdout and "import" in out.stdout


def _padded(tmp_path, name: str, pad: bytes) -> str:
    """A valid trace whose ``info.pad`` is the raw JSON ``pad``, gzipped."""
    import gzip

    d = make_trace().to_dict()
    d["info"]["pad"] = "PAD"
    raw = json.dumps(d).encode().replace(b'"PAD"', pad)
    path = tmp_path / name
    path.write_bytes(gzip.compress(raw, 9))
    return str(path)


def test_a_5000_digit_integer_in_a_trace_file_is_one_line_not_a_crash(tmp_path):
    out = run_cli("info", _padded(tmp_path, "big.o3trace.json.gz", b"7" * 5000))
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "5000 digits" in out.stderr


def _peak_mb(*args: str) -> tuple[subprocess.CompletedProcess, float]:
    """Run ``python -m o3viz ARGS`` in a fresh child of a fresh process; its peak RSS in MB."""
    probe = (
        "import resource, subprocess, sys; "
        "p = subprocess.run([sys.executable, '-m', 'o3viz', *sys.argv[1:]], capture_output=True, text=True); "
        "sys.stderr.write(p.stderr); sys.stdout.write(p.stdout); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024); sys.exit(p.returncode)"
    )
    out = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, timeout=300)
    return out, float(out.stdout.strip().splitlines()[-1])


def test_a_small_gzip_of_120_mb_of_json_costs_a_bounded_peak_in_info(tmp_path):
    """A ~120 KB .gz expanding to 120 MB of JSON (one long string) peaked at 3.4 GB: the nesting scan
    made ~28 bytes of arrays per input byte. Now it scans in 1 MiB chunks."""
    path = _padded(tmp_path, "string.o3trace.json.gz", b'"' + b"a" * (120 << 20) + b'"')
    out, peak = _peak_mb("info", path, "--json")
    assert out.returncode == 0, out.stderr
    assert peak < 1000, f"info peaked at {peak:.0f} MB for 120 MB of JSON"


def test_json_that_would_cost_many_times_its_size_is_refused_with_a_bounded_peak(tmp_path):
    """120 MB of ``[[],[],...]`` (40 million lists) peaked at 6.1 GB; now it is refused in one line
    before it is parsed."""
    path = _padded(tmp_path, "lists.o3trace.json.gz", b"[" + b"[]," * (40 << 20) + b"[]]")
    out, peak = _peak_mb("info", path)
    assert out.returncode == 2 and "lists and objects" in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert peak < 800, f"info peaked at {peak:.0f} MB"
