"""``o3viz run --steer``: a steered run's trace records the spans, α and heads; a span missing
from the prompt, or there more than once without ``--steer-occurrence``, is one line (exit 2)."""

from __future__ import annotations

import argparse

import pytest

from o3viz.cli.main import main
from o3viz.cli.run import add_capture_arguments, add_loop_arguments, request_from_args
from o3viz.errors import UsageError
from o3viz.testing.builders import save_tiny_llama
from o3viz.trace.io import load_trace

pytestmark = [pytest.mark.model]

PROMPT = "Say yes. Answer with one word. Say yes. What is the capital of France?"


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return save_tiny_llama(tmp_path_factory.mktemp("tiny"), num_layers=2, max_positions=256)


def _args(*extra: str):
    p = argparse.ArgumentParser()
    add_capture_arguments(p)
    add_loop_arguments(p)
    return request_from_args(p.parse_args(["--prompt", PROMPT, *extra]))


def test_steer_options_build_the_steer_mode():
    req = _args(
        "--steer", "Say yes.", "--steer-occurrence", "2", "--steer", "one word", "--steer-heads", "1.0,0.3"
    )
    d = req.daa
    assert d.mode == "steer" and d.steer_alpha == 0.01 and d.steer_heads == [(1, 0), (0, 3)]
    assert [(s.text, s.occurrence) for s in d.spans] == [("Say yes.", 2), ("one word", None)]
    assert (
        _args("--steer-segment", "instruction", "--steer-alpha", "0.1").daa.spans[0].segment == "instruction"
    )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--steer", "purple"], "does not occur in the prompt"),
        (["--steer", "Say yes."], "occurs 2 times in the prompt; pick one with --steer-occurrence N"),
        (["--steer", "one word", "--daa", "allocate"], "does not combine with --daa allocate"),
        (["--steer", "one word", "--steer-heads", "3-1"], "--steer-heads: steer heads"),
        (["--steer", "one word", "--steer-alpha", "2"], "alpha must be in"),
        (["--daa", "steer"], "at least one marked span"),
    ],
)
def test_bad_steering_is_one_line(extra, message):
    with pytest.raises(UsageError, match=message) as err:
        _args(*extra)
    assert "\n" not in str(err.value)


def test_run_steer_writes_a_trace_that_records_the_steering(tiny_dir, tmp_path, capsys):
    out = tmp_path / "s.o3trace.json.gz"
    argv = ["run", "--model", str(tiny_dir), "--prompt", PROMPT, "--max-new-tokens", "4", "--out", str(out)]
    assert main([*argv, "--steer", "Answer with one word.", "--steer-heads", "0.1,1.2"]) == 0
    st = load_trace(out).final.attention.steer
    assert st.heads == [(0, 1), (1, 2)] and st.alpha == 0.01 and st.before is not None
    assert [s.label for s in st.spans] == ["text: Answer with one word."]
    assert "steered 1 span(s) in 2 heads" in capsys.readouterr().out
    assert main([*argv, "--overwrite", "--steer", "Say yes."]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len([line for line in err if "o3viz: error:" in line]) == 1 and "--steer-occurrence" in err[-1]
