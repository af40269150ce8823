"""Tests for ``python -m o3viz check-claims`` (o3viz.cli.check_claims), run as a subprocess."""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys

import pytest

from o3viz.cli import check_claims as command
from o3viz.errors import O3vizError
from o3viz.paths import REPO_ROOT

pytestmark = [pytest.mark.subprocess]

ROOT = REPO_ROOT
TEXT = "Janet sells 16 - 3 - 4 = 9 duck eggs.\nShe makes 9 * 2 = $19 every day.\n#### 19\n"


def run_cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "o3viz", "check-claims", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


def test_stdin_dash_prints_a_json_list_of_claims():
    proc = run_cli("-", stdin=TEXT)
    assert proc.returncode == 0, proc.stderr
    claims = json.loads(proc.stdout)
    assert [(c["expression"], c["stated"], c["verdict"]) for c in claims] == [
        ("16-3-4", "9", "correct"),
        ("9*2", "$19", "wrong"),
        ("final answer", "19", "correct"),
    ]
    assert claims[1]["step"] == 1 and TEXT[claims[1]["start"] : claims[1]["end"]] == "9 * 2 = $19"


def run_in_process(argv: list[str], monkeypatch, capsys, stdin: str = "") -> str:
    """The command's own parser and handler, without the cost of a fresh interpreter."""
    parser = argparse.ArgumentParser()
    command.register(parser.add_subparsers())
    args = parser.parse_args(["check-claims", *argv])
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    assert args.func(args) == 0
    return capsys.readouterr().out


def test_no_argument_reads_stdin_and_jsonl_prints_one_object_per_line(monkeypatch, capsys):
    out = run_in_process(["--jsonl"], monkeypatch, capsys, stdin=TEXT)
    lines = out.strip().splitlines()
    assert len(lines) == 3
    assert [json.loads(line)["rule"] for line in lines] == [
        "arith_eq",
        "arith_eq",
        "final_answer_mismatch",
    ]


def test_file_argument_is_read(tmp_path, monkeypatch, capsys):
    path = tmp_path / "trace.txt"
    path.write_text(r"So $\frac{3}{4} \times 8 = 7$.", encoding="utf-8")
    out = run_in_process([str(path), "--jsonl"], monkeypatch, capsys)
    (claim,) = [json.loads(line) for line in out.splitlines()]
    assert (claim["value"], claim["verdict"]) == ("6", "wrong")


def test_text_without_claims_prints_an_empty_list(monkeypatch, capsys):
    out = run_in_process(["-"], monkeypatch, capsys, stdin="No numbers here at all.")
    assert json.loads(out) == []


def test_unreadable_file_raises_o3viz_error(tmp_path):
    with pytest.raises(O3vizError, match="cannot read"):
        command.read_text(str(tmp_path))  # a directory


def test_missing_file_is_one_line_error_and_exit_2(tmp_path):
    proc = run_cli(str(tmp_path / "absent.txt"))
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "absent.txt: no such file" in proc.stderr


def test_unchecked_text_past_the_budget_is_named_on_stderr(tmp_path):
    path = tmp_path / "long.txt"
    path.write_text("So 2 + 2 = 4.\n" * 20_000)
    proc = run_cli(str(path), "--jsonl")
    assert proc.returncode == 0 and "not checked" in proc.stderr
