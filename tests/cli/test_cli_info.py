"""``python -m o3viz info``: the summary, and one-line errors with exit code 2 on bad input."""

from __future__ import annotations

import json
import subprocess
import sys

from o3viz.testing.builders import small_trace as make_trace
from o3viz.trace import SCHEMA_VERSION


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
