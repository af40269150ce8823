"""``run --task/--rounds`` (the verify/optimize loop) and ``run --compress``, end to end on the
embedded model, and their one-line errors."""

from __future__ import annotations

import subprocess
import sys

import pytest

from o3viz.paths import REPO_ROOT as ROOT
from o3viz.trace import load_trace

pytestmark = [pytest.mark.model, pytest.mark.subprocess]


def run_cli(*args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "o3viz", "run", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--task", "nope:3"], "unknown task"),
        (["--prompt", "hi", "--rounds", "0"], "rounds must be at least 1"),
        (["--prompt", "hi", "--compress", "--compress-threshold", "0.2"], "thresholds"),
        (["--prompt", "hi", "--confidence-threshold", "2"], "confidence threshold must be in [0, 1]"),
    ],
)
def test_bad_loop_options_exit_2_with_one_line(tmp_path, args, message):
    out = run_cli(*args, "--out", str(tmp_path / "x.o3trace.json"), timeout=120)
    assert out.returncode == 2, out.stderr
    assert (
        message in out.stderr and len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr
    )


def test_out_of_range_task_exits_2_with_one_line(tmp_path, shared_data):
    out = run_cli("--task", "gsm8k:99999", "--out", str(tmp_path / "x.o3trace.json"), timeout=120)
    assert out.returncode == 2 and "out of range" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr


def test_task_run_records_rounds_checks_and_actions(tmp_path, shared_data):
    path = tmp_path / "g.o3trace.json.gz"
    out = run_cli(
        "--task", "gsm8k:0", "--rounds", "2", "--max-new-tokens", "24", "--layers", "none", "--out", str(path)
    )
    assert out.returncode == 0, out.stderr[-2000:]
    trace = load_trace(path)
    assert trace.task.id == "gsm8k:0" and trace.task.reference == "18"
    first = trace.rounds[0]
    assert any(c.kind == "answer" for c in first.checks) and first.verdict in ("pass", "fail", "unverifiable")
    assert first.action is not None
    if first.action not in ("accept", "accept_confident"):
        assert len(trace.rounds) == 2 and trace.rounds[1].prompt != first.prompt
        assert first.feedback and first.feedback in trace.rounds[1].prompt
        assert trace.rounds[1].action == "stop_max_rounds"


def test_compressed_run_records_pointers_events_and_memory(tmp_path):
    block = "\n".join(f"[worker {i % 4}] heartbeat ok; queue depth 0; retries 0" for i in range(12))
    prompt = (
        "Log:\n" + "\n".join([block] * 6) + "\nNOTE: backup moved to Friday.\n\nQuestion: when is the backup?"
    )
    (tmp_path / "p.txt").write_text(prompt)
    path = tmp_path / "c.o3trace.json"
    out = run_cli(
        "--prompt-file", str(tmp_path / "p.txt"), "--compress", "--max-new-tokens", "8", "--out", str(path)
    )
    assert out.returncode == 0, out.stderr[-2000:]
    trace = load_trace(path)
    comp = trace.compression
    assert comp is not None and comp.compressed_tokens < 0.6 * comp.original_tokens
    assert any(e.kind == "compress" and e.step == -1 for e in comp.events)
    assert comp.memory_tokens and len(comp.memory_tokens) == len(trace.tokens)
    assert "⟦" in trace.final.rendered_prompt and trace.final.prompt == prompt


def test_compressed_run_combines_with_daa_and_the_verify_loop(tmp_path):
    """``--compress`` runs in the one generation loop, so it takes DAA and rounds like any run."""
    block = "\n".join(f"[worker {i % 4}] heartbeat ok; queue depth 0; retries 0" for i in range(12))
    prompt = (
        "Log:\n" + "\n".join([block] * 6) + "\nNOTE: backup moved to Friday.\n\nQuestion: when is the backup?"
    )
    (tmp_path / "p.txt").write_text(prompt)
    path = tmp_path / "t.o3trace.json.gz"
    args = ["--prompt-file", str(tmp_path / "p.txt"), "--compress", "--daa", "allocate", "--rounds", "2"]
    out = run_cli(*args, "--max-new-tokens", "24", "--out", str(path))
    assert out.returncode == 0, out.stderr[-2000:]
    trace = load_trace(path)
    comp, first = trace.compression, trace.rounds[0]
    assert (
        comp is not None and comp.mode == "pointer+eviction" and comp.compressed_tokens < comp.original_tokens
    )
    assert len(comp.memory_tokens) == len(first.tokens) and first.prompt == prompt
    assert first.action is not None and all(r.info["compression"]["ratio"] < 1 for r in trace.rounds)
    if first.action not in ("accept", "accept_confident"):
        assert len(trace.rounds) == 2
    for rnd in trace.rounds:
        daa = rnd.attention.daa
        assert (
            daa.mode == "allocate" and daa.before is not None and daa.before.shape == rnd.attention.mean.shape
        )
