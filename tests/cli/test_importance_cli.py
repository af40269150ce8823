"""``o3viz importance``: each method writes its record into a copy of the trace; bad input gets
one line and exit 2, and nothing is written."""

from __future__ import annotations

import pytest

from o3viz.cli.main import main
from o3viz.testing.builders import save_tiny_llama
from o3viz.trace import Round, Step, Task, Trace, load_trace

pytestmark = [pytest.mark.model, pytest.mark.server]

TEXT = "First, 2 + 3. Let me add. That is 5. Check: 5 - 3 = 2. So the answer is 5."
SPANS = [(0, 13), (14, 25), (26, 36), (37, 54), (55, 74)]


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return str(save_tiny_llama(tmp_path_factory.mktemp("tiny")))


def _save(tmp_path, spans=SPANS, name="t.o3trace.json"):
    steps = [Step(i, TEXT[a:b], a, b) for i, (a, b) in enumerate(spans)]
    t = Trace(Task("What is 2 + 3?", kind="math", reference="5"), [Round(text=TEXT, steps=steps)])
    return t.save(tmp_path / name)


@pytest.mark.parametrize("method", ["receiver", "suppression"])
def test_white_box_methods_write_their_record(tmp_path, tiny_dir, method, capsys):
    src, out = _save(tmp_path), tmp_path / "o.o3trace.json"
    assert (
        main(
            ["importance", str(src), "--method", method, "--model", tiny_dir, "--gap", "1", "--out", str(out)]
        )
        == 0
    )
    rec = load_trace(out).final.importance[0]
    assert rec.method == method and len(rec.scores) == 5 and rec.model["proxy"] is True
    assert f"{method}: " in capsys.readouterr().out


def test_resample_dry_run_prints_the_cost_and_writes_nothing(tmp_path, tiny_dir, capsys):
    src = _save(tmp_path)
    code = main(
        [
            "importance",
            str(src),
            "--method",
            "resample",
            "--model",
            tiny_dir,
            "--k",
            "3",
            "--max-new-tokens",
            "10",
            "--cache-dir",
            str(tmp_path / "c"),
            "--dry-run",
        ]
    )
    assert code == 0
    assert (
        "cost: 6 prefixes × K = 18 rollouts (0 cached); 18 to generate, at most 180 new tokens"
        in capsys.readouterr().err
    )
    assert list(tmp_path.glob("*.o3trace.json")) == [src]


def test_a_trace_too_short_to_chunk_gets_one_line_and_no_file(tmp_path, tiny_dir, capsys):
    src, out = _save(tmp_path, spans=[(0, 13), (14, 25)]), tmp_path / "o.o3trace.json"
    assert main(["importance", str(src), "--method", "receiver", "--model", tiny_dir, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert (
        err.count("\n") == 1
        and "too short to chunk: 2 step(s) in its text, receiver needs at least 3" in err
        and not out.exists()
    )


def test_an_endpoint_that_is_down_gets_one_line_and_no_file(tmp_path, tiny_dir, capsys):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    src, out = _save(tmp_path), tmp_path / "o.o3trace.json"
    code = main(
        [
            "importance",
            str(src),
            "--method",
            "resample",
            "--base-url",
            f"http://127.0.0.1:{port}/v1",
            "--model",
            "m",
            "--reader",
            tiny_dir,
            "--retries",
            "0",
            "--k",
            "1",
            "--max-new-tokens",
            "2",
            "--cache-dir",
            str(tmp_path / "c"),
            "--out",
            str(out),
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert (
        code == 2
        and err[-1].startswith("o3viz: error: endpoint http://127.0.0.1")
        and "cannot reach it" in err[-1]
    )
    assert not out.exists()


def test_published_labels_need_a_labels_file(tmp_path, capsys):
    src = _save(tmp_path)
    assert (
        main(["importance", str(src), "--method", "published", "--out", str(tmp_path / "o.o3trace.json")])
        == 2
    )
    assert "needs --labels" in capsys.readouterr().err


def _labels(tmp_path):
    import json

    chunks = [{"chunk": TEXT[a:b], "counterfactual_importance_kl": 0.1 * i} for i, (a, b) in enumerate(SPANS)]
    path = tmp_path / "labels.jsonl"
    path.write_text(json.dumps({"chunks_labeled": chunks}) + "\n")
    return path


def test_an_out_file_that_appears_while_importance_runs_is_not_replaced(tmp_path, capsys, monkeypatch):
    import o3viz.cli.importance as cli

    src, out = _save(tmp_path), tmp_path / "o.o3trace.json"
    real = cli._published

    def someone_else_writes_out_meanwhile(args, trace):
        out.write_text("theirs")
        return real(args, trace)

    monkeypatch.setattr(cli, "_published", someone_else_writes_out_meanwhile)
    argv = ["importance", str(src), "--method", "published", "--labels", str(_labels(tmp_path))]
    assert main([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "exists" in err[0] and out.read_text() == "theirs"
    assert main([*argv, "--out", str(out), "--overwrite"]) == 0  # asked for: replaced
    assert load_trace(out).final.importance


def test_a_silent_endpoint_ends_each_request_at_request_timeout_in_one_line(tmp_path, tiny_dir, capsys):
    import socket
    import time

    with socket.create_server(("127.0.0.1", 0)) as srv:  # accepts (the backlog) but never answers
        port = srv.getsockname()[1]
        src, out = _save(tmp_path), tmp_path / "o.o3trace.json"
        t0 = time.monotonic()
        code = main(
            ["importance", str(src), "--method", "resample", "--base-url", f"http://127.0.0.1:{port}/v1"]
            + ["--model", "m", "--reader", tiny_dir, "--retries", "1", "--k", "1", "--max-new-tokens", "2"]
            + ["--request-timeout", "1", "--cache-dir", str(tmp_path / "c"), "--out", str(out)]
        )
        waited = time.monotonic() - t0
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and "deadline of 1 s" in err[-1] and "failed after 2 tries" in err[-1]
    assert waited < 30 and not out.exists()  # the reader loads first; the endpoint costs ~2 s


def test_resample_with_k_4_prints_each_steps_interval_noise_floor_and_whether_it_clears(
    tmp_path, tiny_dir, capsys
):
    src, out = _save(tmp_path), tmp_path / "r.o3trace.json"
    args = ["importance", str(src), "--method", "resample", "--k", "4", "--model", tiny_dir]
    code = main([*args, "--max-new-tokens", "3", "--cache-dir", str(tmp_path / "c"), "--out", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "90% interval" in printed and "noise floor" in printed and "clear their noise floor" in printed
    rec = load_trace(out).final.importance[0]
    for key in ("ci_low", "ci_high", "noise_floor", "clears_floor", "headroom", "baseline_position"):
        assert len(rec.series[key]) == 5
    assert all(v in (0.0, 1.0) for v in rec.series["clears_floor"] if v is not None)


def test_a_budget_in_rollouts_runs_adaptive_resampling_within_it(tmp_path, tiny_dir, capsys):
    src, out = _save(tmp_path), tmp_path / "a.o3trace.json"
    args = ["importance", str(src), "--method", "resample", "--k", "4", "--model", tiny_dir, "--budget", "7r"]
    code = main([*args, "--max-new-tokens", "3", "--cache-dir", str(tmp_path / "c"), "--out", str(out)])
    assert code == 0
    assert "adaptive: 7 rollouts of a fixed run's 24" in capsys.readouterr().err
    rec = load_trace(out).final.importance[0]
    assert rec.info["rollouts"] == 7 and rec.params["adaptive"]["budget_rollouts"] == 7


def test_a_budget_that_is_neither_seconds_rollouts_nor_tokens_is_one_line(tmp_path, tiny_dir, capsys):
    src = _save(tmp_path)
    args = ["importance", str(src), "--method", "resample", "--model", tiny_dir, "--budget", "lots"]
    assert main([*args, "--out", str(tmp_path / "x.o3trace.json")]) == 2
    assert "give rollouts (500r) or tokens" in capsys.readouterr().err
