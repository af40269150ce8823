"""``o3viz importance --dataset``: misuse is one line (exit 2) before any model or request, and a
dry run prints the dataset's cost without touching the endpoint or the store."""

from __future__ import annotations

import pytest

from o3viz.cli.main import main
from o3viz.store.query import Query
from o3viz.store.store import Store
from o3viz.testing.datasets import write_reasoning_jsonl

pytestmark = [pytest.mark.server, pytest.mark.subprocess]

URL = "http://127.0.0.1:9/v1"  # the discard port: nothing answers there


@pytest.fixture
def home(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("O3VIZ_HOME", str(tmp_path / "home"))
    assert (
        main(
            [
                "import",
                str(write_reasoning_jsonl(tmp_path / "toy.jsonl", 2)),
                "--all",
                "--dataset",
                "toy",
                "--workers",
                "0",
            ]
        )
        == 0
    )
    capsys.readouterr()
    return tmp_path


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--dataset", "toy", "--method", "resample"], "--base-url URL --model NAME"),
        (
            ["--dataset", "toy", "--method", "receiver", "--base-url", URL, "--model", "m"],
            "--method resample",
        ),
        (
            ["x.o3trace.json", "--dataset", "toy", "--method", "resample", "--base-url", URL, "--model", "m"],
            "no TRACE",
        ),
        (
            ["--dataset", "nope", "--method", "resample", "--base-url", URL, "--model", "m"],
            "no traces in dataset 'nope'",
        ),
        (["--method", "resample"], "give a TRACE file, or --dataset NAME"),
        (
            [
                "--dataset",
                "toy",
                "--method",
                "resample",
                "--base-url",
                URL,
                "--model",
                "m",
                "--budget",
                "900t",
            ],
            "in seconds (3600) or rollouts (500r), not tokens",
        ),
        (
            ["--dataset", "toy", "--method", "resample", "--base-url", URL, "--model", "m", "--budget", "-5"],
            "--budget in seconds must be positive",
        ),
    ],
)
def test_dataset_misuse_is_one_line(home, capsys, argv, says):
    assert main(["importance", *argv]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err


def test_a_dataset_dry_run_prints_the_cost_and_changes_nothing(home, capsys):
    keys = {r["key"] for r in Store().rows(Query(limit=100))}
    argv = ["importance", "--dataset", "toy", "--method", "resample", "--base-url", URL, "--model", "m"]
    assert main([*argv, "--k", "3", "--dry-run", "--cache-dir", str(home / "c")]) == 0
    prefixes = sum(len(Store().trace(k).final.steps) + 1 for k in keys)
    assert f"{len(keys)} traces, {3 * prefixes} rollouts to fetch (0 cached)" in capsys.readouterr().err
    assert {r["key"] for r in Store().rows(Query(limit=100))} == keys


@pytest.mark.parametrize("budget", ["600", "4r"])
def test_a_dataset_run_takes_the_budget_in_seconds_or_rollouts(home, capsys, budget):
    argv = ["importance", "--dataset", "toy", "--method", "resample", "--base-url", URL, "--model", "m"]
    assert main([*argv, "--k", "3", "--dry-run", "--budget", budget, "--cache-dir", str(home / "c")]) == 0
    assert "rollouts to fetch" in capsys.readouterr().err
