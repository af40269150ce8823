"""Issue 41, finding 16 and the smaller ones: ``o3viz app FOLDER`` starts with the good files of a
folder and names each bad one on stderr (before, one truncated file among hundreds stopped it, and
the error did not say which); ``--store FILE`` and a FIFO are one line; and a reader that goes away
(``o3viz info ... | head``) ends any command quietly. The app itself is not started here: the
server process is replaced by a stub."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from o3viz.cli import app as app_cli
from o3viz.cli.main import main
from o3viz.paths import samples_dir
from o3viz.store.store import Store
from o3viz.testing.browser import free_port

GOOD = ("gsm8k_word_problem.o3trace.json.gz", "humaneval_function.o3trace.json.gz")


class _Server:
    """Stands in for the Streamlit process: ``serve_until_stopped`` returns at once."""

    started: list[list[str]] = []

    def __init__(self, cmd, **kw) -> None:
        _Server.started.append(cmd)

    def wait(self, timeout=None) -> int:
        return 0


@pytest.fixture
def no_server(monkeypatch):
    _Server.started = []
    monkeypatch.setattr(app_cli.subprocess, "Popen", _Server)
    monkeypatch.setenv("O3VIZ_HOME", "/nonexistent/o3viz-home-not-used")
    return _Server.started


def _app(*args: str) -> int:
    return main(["app", *args, "--port", str(free_port()), "--no-browser"])


@pytest.fixture
def folder(tmp_path):
    d = tmp_path / "traces"
    (d / "sub").mkdir(parents=True)
    for name in GOOD:
        shutil.copy(samples_dir() / name, d / name)
    data = (samples_dir() / "long_prompt_2k.o3trace.json.gz").read_bytes()
    (d / "sub" / "truncated.o3trace.json.gz").write_bytes(data[:5000])
    (d / "sub" / "empty.o3trace.json").write_bytes(b"")
    os.mkfifo(d / "pipe.o3trace.json")  # never opened: it would wait for a writer
    (d / "loop").symlink_to(d)  # a folder that holds itself: not followed
    (d / "folder.o3trace.json").mkdir()  # a folder with a trace's name: searched, not read
    return d


def test_a_folder_with_bad_files_starts_with_the_good_ones_and_names_the_bad(
    folder, tmp_path, no_server, capsys
):
    store = tmp_path / "store"
    assert _app(str(folder), "--store", str(store)) == 0  # before: exit 2 at the truncated file
    out, err = capsys.readouterr()
    assert "added 2 traces to the store" in out and "(3 skipped)" in out, out
    lines = err.splitlines()
    assert len(lines) == 3, err
    assert any("pipe.o3trace.json: not a regular file" in line for line in lines)
    assert any("truncated.o3trace.json.gz: not a valid gzip stream" in line for line in lines)
    assert any("empty.o3trace.json: " in line for line in lines)
    assert all(line.startswith("o3viz: skipped ") for line in lines)
    assert Store(store).count() == 2 and len(no_server) == 1


def test_a_folder_of_only_bad_files_is_one_line_after_naming_them(tmp_path, no_server, capsys):
    d = tmp_path / "bad"
    d.mkdir()
    (d / "a.o3trace.json").write_text('{"schema_version": ')
    assert _app(str(d), "--store", str(tmp_path / "store")) == 2
    err = capsys.readouterr().err
    assert "skipped" in err and "a.o3trace.json" in err
    assert (
        err.splitlines()[-1] == "o3viz: error: none of the 1 trace files could be added (each is named above)"
    )
    assert no_server == []


def test_store_naming_a_file_is_refused_in_one_line(tmp_path, no_server, capsys):
    not_a_folder = tmp_path / "store.txt"
    not_a_folder.write_text("x")
    assert _app("--store", str(not_a_folder)) == 2  # before: the app started on it
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--store" in err and "not a folder" in err
    assert no_server == []


@pytest.mark.timeout(60)
def test_a_fifo_named_is_not_a_regular_file_and_is_never_opened(tmp_path, no_server, capsys):
    fifo = tmp_path / "t.o3trace.json"
    os.mkfifo(fifo)
    assert _app(str(fifo)) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"o3viz: error: {fifo}: not a regular file or folder"  # before: "no such file"


def test_a_dangling_link_named_says_so(tmp_path, no_server, capsys):
    link = tmp_path / "t.o3trace.json"
    link.symlink_to(link)
    assert _app(str(link)) == 2
    assert "a symbolic link that leads to nothing" in capsys.readouterr().err


@pytest.mark.subprocess
@pytest.mark.parametrize(
    "args",
    [["info", str(samples_dir() / GOOD[0])], ["library", "list"]],
    ids=["info", "library-list"],
)
def test_a_reader_that_goes_away_ends_the_command_quietly(args, tmp_path):
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line: every write fails (EPIPE)
    env = {**os.environ, "O3VIZ_HOME": str(tmp_path / "home")}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "o3viz", *args],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            timeout=120,
        )
    finally:
        os.close(write)
    assert done.returncode in (0, 1) and done.stderr == "", done.stderr[-800:]  # before: a traceback
