"""``o3viz run --tasks gsm8k --limit N --pair-a A --pair-b B`` on a tiny random llama: two datasets
land in the library, paired 100%, and the paired table of ``o3viz compare --dataset`` is printed;
bad paired-run options exit 2 with one line before any model loads."""

from __future__ import annotations

import pytest

from o3viz.cli.main import main
from o3viz.store.query import Query
from o3viz.store.store import Store
from o3viz.testing.builders import save_tiny_llama

pytestmark = [pytest.mark.model]


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return save_tiny_llama(tmp_path_factory.mktemp("tiny"), num_layers=2, max_positions=512)


def test_a_paired_run_lands_as_two_paired_datasets_and_prints_the_table(tiny_dir, capsys, shared_data):
    argv = ["run", "--tasks", "gsm8k", "--limit", "2", "--start", "5", "--model", str(tiny_dir)]
    argv += ["--max-new-tokens", "4", "--rounds", "1", "--pair-b", "daa=allocate", "--dataset", "t"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    a, b = "t · A: daa=off", "t · B: daa=allocate"
    store = Store()
    for ds, daa in ((a, "off"), (b, "allocate")):
        rows = store.rows(
            Query(dataset=[ds], sort="id", descending=False), ("task", "record", "daa", "source")
        )
        assert rows == [
            {"task": "gsm8k:5", "record": 6, "daa": daa, "source": "run"},
            {"task": "gsm8k:6", "record": 7, "daa": daa, "source": "run"},
        ]
    assert "2 of 2 tasks paired" in out
    assert f"A = {a} (2 traces)   B = {b} (2 traces)" in out
    assert "paired by question: 2 questions; unpaired 0 in A, 0 in B" in out
    assert "B right" in out and "McNemar" not in out.split("B right")[0]
    assert "note: 0 of 2 pairs run now are graded on both sides: 2 replies on side A and 2 on side B" in out
    # a rerun resumes: nothing runs again, the same table
    assert main(argv) == 0
    assert "(2 already there)" in capsys.readouterr().out
    assert len(store.select(Query(), ("key",))) == 4


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--tasks", "gsm8k", "--pair-b", "daa=allocate"], "--limit"),
        (["--tasks", "gsm8k", "--limit", "2", "--pair-b", "daa=allocate", "--rounds", "3"], "--rounds 3"),
        (["--tasks", "gsm8k", "--limit", "2"], "--pair-b"),
        (["--tasks", "gsm8k", "--limit", "2", "--pair-b", "daa=sideways"], "--pair-b: setting"),
        (
            ["--tasks", "gsm8k", "--limit", "2", "--pair-a", "daa=allocate", "--pair-b", "daa=allocate"],
            "same",
        ),
        (["--tasks", "gsm8k", "--limit", "2", "--daa", "allocate", "--pair-b", "daa=off"], "per side"),
        (
            ["--tasks", "gsm8k", "--limit", "2", "--pair-b", "daa=allocate", "--out", "x.o3trace.json"],
            "--out",
        ),
        (["--prompt", "hi", "--pair-b", "daa=allocate", "--out", "x.o3trace.json"], "only with --tasks"),
        (["--prompt", "hi"], "--out is required"),
    ],
)
def test_bad_paired_options_exit_2_with_one_line(capsys, extra, message, shared_data):
    assert main(["run", *extra]) == 2
    err = capsys.readouterr().err.strip()
    errors = [line for line in err.splitlines() if "o3viz: error:" in line]
    assert len(errors) == 1 and message in errors[0], err
    assert "Traceback" not in err


def test_help_explains_the_paired_run(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = capsys.readouterr().out
    for word in ("--tasks", "--pair-a", "--pair-b", "--limit", "daa=allocate", "resumes"):
        assert word in out
