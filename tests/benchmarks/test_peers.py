"""The peers benchmark's driver stays runnable: a real 8-token o3viz run through every phase, its
CSV, the watchdog's kill, and a missing peer reported with its reason. No peer venv is created
and nothing touches the network."""

from __future__ import annotations

import sys

import pytest

from benchmarks.peers.child import parse_output, run_child
from benchmarks.peers.driver import Driver, Figure, Settings, read_csv, write_csv
from benchmarks.peers.tools import by_name

pytestmark = [pytest.mark.model, pytest.mark.subprocess]


def _settings(tmp_path, tools: str, **kw) -> Settings:
    from transformers import AutoTokenizer

    from benchmarks.capture import PROMPT
    from o3viz.model import resolve_model
    from o3viz.run.prompt import layout_prompt

    model_dir = resolve_model(None)[0]
    ids = list(layout_prompt(AutoTokenizer.from_pretrained(model_dir), PROMPT).ids)
    return Settings(model_dir, ids, PROMPT, by_name(tools), peers_dir=tmp_path / "peers", **kw)


def test_tiny_o3viz_run_fills_every_phase_and_round_trips_its_csv(tmp_path):
    s = _settings(tmp_path, "o3viz_capture", tokens=[8], memory_tokens=[8], size_tokens=8, pairs=1, threads=1)
    lines: list[str] = []
    figures = Driver(s, emit=lambda f: lines.append(f.line())).run()
    got = {f.figure: f for f in figures}
    assert float(got["time_vs_plain_o3viz_capture_8"].value) > 0
    assert float(got["peak_mb_o3viz_capture_8"].value) >= 0
    assert got["longest_within_cap_o3viz_capture"].value == ">= 8"
    assert float(got["size_mb_o3viz_capture_8"].value) > 0
    assert got["loads_back_o3viz_capture_8"].value == "yes"
    assert "o3viz" in got["versions_o3viz"].value
    assert all(": " in line for line in lines) and len(lines) == len(figures)
    path = write_csv(figures, tmp_path / "out" / "peers.csv")
    assert read_csv(path) == figures


def test_a_peer_without_its_venv_is_reported_with_the_reason(tmp_path):
    (tmp_path / "peers" / "transformer_lens").mkdir(parents=True)
    (tmp_path / "peers" / "transformer_lens" / ".install-failed").write_text("pip install failed\n")
    s = _settings(tmp_path, "inseq_attention,tl_run_with_cache", tokens=[8], memory_tokens=[8], size_tokens=8)
    figures = Driver(s, emit=lambda f: None).run()
    reasons = {f.tool: f.detail for f in figures if f.figure.startswith("unavailable_")}
    assert "make bench-peers" in reasons["inseq_attention"]
    assert "install failed: pip install failed" in reasons["tl_run_with_cache"]
    assert {f.value for f in figures if f.figure.startswith("time_vs_plain")} == {"unavailable"}


def test_a_skipped_phase_adds_no_figures(tmp_path):
    s = _settings(tmp_path, "inseq_attention", tokens=[], memory_tokens=[], size_tokens=0)
    figures = Driver(s, emit=lambda f: None).run()
    assert [f.figure for f in figures] == ["unavailable_inseq_attention"]


def test_watchdog_kills_a_growing_child_before_it_reaches_the_memory_cap():
    # grows by 16 MB every 20 ms up to 1.6 GB, then would print a RESULT
    hog = (
        "import time\nchunks = []\nfor _ in range(100):\n"
        "    chunks.append(b'x' * (16 << 20))\n    time.sleep(0.02)\nprint('RESULT {}')"
    )
    out = run_child([sys.executable, "-c", hog], cap_bytes=640 << 20, limit_s=60, margin=128 << 20)
    assert not out.ok and out.stopped == "memory cap", out.reason
    assert 512 <= out.watched_peak_mb < 640


def test_watchdog_stops_a_child_at_its_time_limit():
    out = run_child([sys.executable, "-c", "import time; time.sleep(30)"], cap_bytes=2**34, limit_s=0.5)
    assert not out.ok and out.stopped == "time limit"


@pytest.mark.parametrize(
    ("stdout", "ok", "error"),
    [
        ('noise\nRESULT {"seconds": 1.5}\n', True, ""),
        ('ERROR {"error": "ValueError: no such model"}\n', False, "ValueError: no such model"),
        ("just logs\n", False, "the child printed no RESULT line"),
        ("RESULT [1, 2]\n", False, "RESULT line is not an object"),
    ],
)
def test_parse_output_reads_the_result_line_or_says_why_not(stdout, ok, error):
    result, err = parse_output(stdout)
    assert (result is not None) == ok and err == error


def test_unknown_tool_names_are_refused():
    with pytest.raises(ValueError, match="unknown tool nope"):
        by_name("o3viz_capture,nope")
    assert Figure("a", "t", None, "1").line() == "a: 1"


def test_cli_table_prints_a_row_per_tool_and_the_reasons(tmp_path, capsys):
    from benchmarks.__main__ import build_parser

    figures = [
        Figure("time_vs_plain_o3viz_capture_64", "o3viz_capture", 64, "1.020", "ratio", "median of 1 pairs"),
        Figure(
            "peak_mb_tl_run_with_cache_4096",
            "tl_run_with_cache",
            4096,
            "stopped",
            "MB",
            "stopped: RSS reached",
        ),
        Figure(
            "longest_within_cap_tl_run_with_cache",
            "tl_run_with_cache",
            2048,
            "2048",
            "tokens",
            "stopped at 4096",
        ),
    ]
    path = write_csv(figures, tmp_path / "peers.csv")
    args = build_parser().parse_args(["peers", "--table", str(path)])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "| o3viz capture (default) | 1.020× | not run |" in out
    assert (
        "| TransformerLens run_with_cache | not run | not run | not run | not run | stopped | not run | 2048 |"
        in out
    )
    assert "stopped at 4096" in out
