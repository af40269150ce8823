"""``python -m o3viz run`` on a tiny random llama saved to a directory (with the default model's
tokenizer): it writes a loadable trace, and bad input exits 2 with one line."""

from __future__ import annotations

import argparse

import pytest

from o3viz.cli.main import main
from o3viz.cli.run import add_capture_arguments, add_loop_arguments, request_from_args
from o3viz.errors import UsageError
from o3viz.testing.builders import save_tiny_llama
from o3viz.trace.io import load_trace

pytestmark = [pytest.mark.model]


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return save_tiny_llama(tmp_path_factory.mktemp("tiny"), num_layers=2, max_positions=256)


def test_run_writes_a_trace_with_the_requested_settings(tiny_dir, tmp_path, capsys):
    out = tmp_path / "t.o3trace.json.gz"
    code = main(
        [
            "run",
            "--model",
            str(tiny_dir),
            "--prompt",
            "What is 2 + 3?",
            "--max-new-tokens",
            "5",
            "--layers",
            "0,1",
            "--top-k",
            "all",
            "--daa",
            "observe",
            "--explore",
            "1",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    tr = load_trace(out)
    att = tr.final.attention
    assert len(tr.final.tokens) == 5 and att.layers == [0, 1] and att.daa.mode == "observe"
    assert att.info["top_k"] is None and len(tr.final.branches) == 1
    assert tr.provenance.settings["max_new_tokens"] == 5 and tr.provenance.model_id == str(tiny_dir)
    captured = capsys.readouterr()
    assert "saved" in captured.out and tr.final.text in captured.err  # the text streamed on stderr


def test_run_reads_a_prompt_file_and_overwrites_only_when_asked(tiny_dir, tmp_path, capsys):
    prompt = tmp_path / "p.txt"
    prompt.write_text("Name a colour.", encoding="utf-8")
    out = tmp_path / "t.o3trace.json"
    args = [
        "run",
        "--model",
        str(tiny_dir),
        "--prompt-file",
        str(prompt),
        "--max-new-tokens",
        "2",
        "--out",
        str(out),
    ]
    assert main(args) == 0 and load_trace(out).final.prompt == "Name a colour."
    assert main(args) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert main([*args, "--overwrite"]) == 0


@pytest.mark.parametrize(
    "extra",
    [
        ["--layers", "0,x"],
        ["--top-k", "0"],
        ["--max-new-tokens", "0"],
        ["--temperature", "-1"],
        ["--layers", "5"],
        ["--out", "x.json"],
        ["--model", "/nonexistent/model"],
    ],
)
def test_bad_input_exits_2_with_one_line(tiny_dir, tmp_path, capsys, extra):
    args = [
        "run",
        "--model",
        str(tiny_dir),
        "--prompt",
        "hi",
        "--max-new-tokens",
        "2",
        "--out",
        str(tmp_path / "t.o3trace.json"),
        *extra,
    ]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    errors = [line for line in err.splitlines() if "o3viz: error:" in line]  # (weights loading bars aside)
    assert len(errors) == 1 and err.endswith(errors[0]) and "Traceback" not in err


def test_missing_prompt_is_a_usage_error():
    with pytest.raises(SystemExit) as exc:
        main(["run", "--out", "x.o3trace.json"])
    assert exc.value.code == 2


def test_request_from_args_builds_the_run_request():
    p = argparse.ArgumentParser()
    add_capture_arguments(p)
    add_loop_arguments(p)
    s = request_from_args(
        p.parse_args(
            [
                "--prompt",
                "x",
                "--daa",
                "allocate",
                "--daa-strength",
                "2",
                "--layers",
                "all",
                "--sample",
                "--seed",
                "7",
            ]
        )
    )
    assert s.prompt == "x" and s.daa.mode == "allocate" and s.daa.strength == 2.0
    assert s.capture.layers == "all" and s.do_sample and s.seed == 7 and s.max_rounds == 1
    with pytest.raises(UsageError):
        request_from_args(p.parse_args(["--prompt", " "]))


def test_run_records_the_logit_lens_and_moefied_routing(tiny_dir, tmp_path):
    out = tmp_path / "lens.o3trace.json.gz"
    argv = ["run", "--model", str(tiny_dir), "--prompt", "What is 2 + 3?", "--max-new-tokens", "4"]
    assert main([*argv, "--logit-lens", "0,-1", "--moefy", "8,2", "--out", str(out)]) == 0
    internals = load_trace(out).final.internals
    assert internals.lens.layers == [0, 1] and internals.lens.token_ids.shape[0] == 4
    assert internals.routing.source == "moefied" and internals.routing.experts.shape == (4, 2, 2)


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--logit-lens", "0,7"], "layer 7 does not exist"),
        (["--routing"], "no mixture-of-experts router"),
        (["--moefy", "4,8"], "k must lie in"),
        (["--logit-lens", "a"], "integers"),
    ],
)
def test_bad_internals_options_exit_2_with_one_line(tiny_dir, tmp_path, capsys, extra, message):
    argv = ["run", "--model", str(tiny_dir), "--prompt", "Hi", "--out", str(tmp_path / "x.o3trace.json.gz")]
    assert main([*argv, *extra]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("o3viz:")]
    assert len(errors) == 1 and message in errors[0]  # (model loading may print progress first)
