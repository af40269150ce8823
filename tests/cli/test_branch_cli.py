"""``o3viz branch``: --edit, --resample K and --until-differs write traces that load, name the
fork step and are in the store linked to their parent; the cost comes first; bad input is one
line and exit 2, before any model loads."""

from __future__ import annotations

import socket

import pytest

from o3viz.branch import branches_of
from o3viz.cli.main import main
from o3viz.paths import REPO_ROOT
from o3viz.store.store import Store
from o3viz.testing.builders import save_tiny_llama, small_trace
from o3viz.trace import load_trace

pytestmark = [pytest.mark.model, pytest.mark.server]

SAMPLE = REPO_ROOT / "sample_traces" / "gsm8k_word_problem.o3trace.json.gz"


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return str(save_tiny_llama(tmp_path_factory.mktemp("tiny")))


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("O3VIZ_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "home"


def _branch(args, tmp_path, name="b.o3trace.json.gz"):
    out = tmp_path / name
    return main(["branch", str(SAMPLE), "--step", "0:2", *args, "--out", str(out)]), out


@pytest.mark.parametrize(
    "how", [["--edit", "So 42 muffins."], ["--resample", "3"], ["--until-differs", "--max-tries", "2"]]
)
def test_each_kind_writes_a_branch_in_the_store_linked_to_its_parent(how, tiny_dir, home, tmp_path, capsys):
    rc, out = _branch([*how, "--model", tiny_dir, "--max-new-tokens", "6"], tmp_path)
    io = capsys.readouterr()
    assert rc == 0, io.err
    assert io.err.index("cost:") < len(io.err) and "continuation" in io.err
    b = load_trace(out)
    assert b.parent.step == "0:2" and b.parent.kind == ("edit" if how[0] == "--edit" else "resample")
    assert len(b.rounds) == (3 if how[0] == "--resample" else len(b.rounds))
    store = Store(home)
    links = branches_of(store, b.parent.key)
    assert store.row(b.parent.key) is not None and [lk.step for lk in links] == ["0:2"]


@pytest.mark.parametrize(
    "args, says",
    [
        (["--step", "0:99", "--edit", "x"], "round 0 has"),
        (["--step", "zero", "--edit", "x"], "not a step id"),
        (["--step", "0:2", "--edit", " "], "is empty"),
        (["--step", "0:2", "--edit", "y" * 4001], "over the limit"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, says, home, tmp_path, capsys):
    rc = main(["branch", str(SAMPLE), *args, "--out", str(tmp_path / "b.o3trace.json")])
    err = capsys.readouterr().err
    assert rc == 2 and says in err and err.count("\n") == 1 and not (tmp_path / "b.o3trace.json").exists()


def test_a_trace_without_a_prompt_is_one_line(home, tmp_path, capsys):
    t = small_trace()
    t.task.question = ""
    for r in t.rounds:
        r.prompt = ""
    src = t.save(tmp_path / "bare.o3trace.json")
    assert (
        main(["branch", str(src), "--step", "0:0", "--edit", "x", "--out", str(tmp_path / "o.o3trace.json")])
        == 2
    )
    assert "no prompt" in capsys.readouterr().err


def test_an_endpoint_that_is_down_is_one_line(home, tmp_path, capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nothing listens there
    rc, out = _branch(["--edit", "x", "--base-url", f"http://127.0.0.1:{port}/v1", "--model", "m"], tmp_path)
    err = capsys.readouterr().err
    assert rc == 2 and "cannot reach it" in err and err.strip().count("\n") == 1 and not out.exists()


@pytest.mark.slow
@pytest.mark.parametrize("how", [["--edit", "This is 24 + 18 = 42 muffins in all."], ["--resample", "3"]])
def test_the_sample_branches_with_the_embedded_model(how, home, tmp_path, capsys):
    rc, out = _branch([*how, "--max-new-tokens", "8"], tmp_path)
    assert rc == 0, capsys.readouterr().err
    b = load_trace(out)
    assert b.parent.step == "0:2" and Store(home).row(b.parent.key) is not None
    assert branches_of(Store(home), b.parent.key)[0].kind == b.parent.kind
