"""Every command that takes a trace also takes a store key (or a unique prefix of one): what
``o3viz import`` and ``o3viz library list`` print works as the TRACE of info, export, importance
and branch; a key the store does not hold is one line, exit 2."""

from __future__ import annotations

import json

import pytest

from o3viz.cli.main import main

SOLUTION = {"question": "Q?", "answer": "1 + 1 = 2. So 2.\n#### 2"}


@pytest.fixture
def key(tmp_path, capsys) -> str:
    src = tmp_path / "one.json"
    src.write_text(json.dumps(SOLUTION))
    assert main(["import", str(src)]) == 0
    return capsys.readouterr().out.split("the store as ")[1].split()[0]


def test_info_and_export_take_a_key_or_its_prefix(key, tmp_path, capsys):
    assert main(["info", key[:6]]) == 0
    out = capsys.readouterr().out
    assert "steps              3" in out and "tokens             —" in out  # unknown, not "None" or 0
    dest = tmp_path / "spans.json"
    assert main(["export", key, "--out", str(dest)]) == 0
    assert f"from store key {key}" in capsys.readouterr().out and dest.is_file()


@pytest.mark.model
def test_importance_takes_a_key(key, capsys):
    assert main(["importance", key, "--method", "resample", "--k", "2", "--dry-run"]) == 0
    said = capsys.readouterr()
    assert "rollouts" in said.out + said.err


def test_branch_takes_a_key(key, tmp_path, capsys):
    # a step the trace does not have: refused after the key was read, before any model loads
    assert (
        main(["branch", key, "--step", "0:99", "--resample", "2", "--out", str(tmp_path / "b.o3trace.json")])
        == 2
    )
    err = capsys.readouterr().err
    assert "no such file" not in err and "99" in err


def test_a_key_the_store_does_not_hold_is_one_line(capsys):
    assert main(["info", "deadbeef"]) == 2
    assert main(["export", "deadbeef", "--out", "x.json"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all("deadbeef: no such file, and no trace has that key" in e for e in err)
    assert main(["info", "not-a-file.o3trace.json"]) == 2
    assert "no such file (nor a store key" in capsys.readouterr().err
