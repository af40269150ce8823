"""Hostile command lines through ``python -m o3viz`` (a real subprocess, a temporary O3VIZ_HOME):
each gets one stderr line and exit 2, never a traceback; ``library export --parquet`` never
clobbers what is there."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from o3viz.paths import REPO_ROOT
from o3viz.testing.datasets import write_reasoning_jsonl

pytestmark = [pytest.mark.subprocess]

BAD = b"\xff\xfeab\xc3"  # not UTF-8: Python hands it over as lone surrogates


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """A store holding five imported traces of dataset ``toy``."""
    home = tmp_path_factory.mktemp("home")
    src = write_reasoning_jsonl(tmp_path_factory.mktemp("src") / "toy.jsonl", 5)
    out = _o3viz(home, "import", str(src), "--all", "--dataset", "toy", "--workers", "0")
    assert out.returncode == 0, out.stderr
    return home


def _o3viz(home, *args: str | bytes) -> subprocess.CompletedProcess:
    env = {**os.environ, "O3VIZ_HOME": str(home), "PYTHONPATH": str(REPO_ROOT)}
    argv = [
        os.fsencode(sys.executable),
        b"-m",
        b"o3viz",
        *(a if isinstance(a, bytes) else a.encode() for a in args),
    ]
    return subprocess.run(argv, capture_output=True, env=env, timeout=180)


def _one_line(out: subprocess.CompletedProcess, *words: str) -> str:
    err = out.stderr.decode(errors="replace")
    assert out.returncode == 2, (out.returncode, err)
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert err.startswith("o3viz: error: ") and all(w in err for w in words), err
    return err


@pytest.mark.parametrize(
    "args",
    [
        (b"library", b"search", BAD),
        (b"library", b"show", BAD),
        (b"library", b"rm", BAD),
        (b"library", b"list", b"--dataset", BAD),
        (b"library", b"list", b"--model", BAD),
        (b"library", b"rm", b"--dataset", BAD, b"--yes"),
    ],
    ids=["search", "show", "rm", "list-dataset", "list-model", "rm-dataset"],
)
def test_text_that_is_not_utf8_is_one_line(home, args):
    _one_line(_o3viz(home, *args), "not valid UTF-8")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("library", "list", "--sort", "x"), ("cannot sort by 'x'",)),
        (("library", "search", "wait", "--step-type", "nope"), ("unknown step type 'nope'",)),
        (("library", "list", "--offset", "9223372036854775808"), ("out of range",)),
        (("library", "export", "--parquet", ""), ("needs a file name",)),
    ],
    ids=["sort", "step-type", "offset", "empty-parquet"],
)
def test_bad_library_options_are_one_line(home, args, words):
    _one_line(_o3viz(home, *args), *words)


def test_export_refuses_an_existing_file_unless_overwrite(home, tmp_path):
    target = tmp_path / "steps.parquet"
    target.write_text("mine")
    _one_line(_o3viz(home, "library", "export", "--parquet", str(target)), "exists", "--overwrite")
    assert target.read_text() == "mine"
    assert _o3viz(home, "library", "export", "--parquet", str(target), "--overwrite").returncode == 0
    assert pq.read_table(target).num_rows > 0


def test_export_never_writes_through_a_symlink_to_proc_self_fd(home, tmp_path):
    target = tmp_path / "out.parquet"
    target.symlink_to("/proc/self/fd/1")
    for extra in ([], ["--overwrite"]):
        _one_line(_o3viz(home, "library", "export", "--parquet", str(target), *extra))
        assert target.is_symlink() and os.readlink(target) == "/proc/self/fd/1"


def test_export_never_replaces_a_fifo_or_a_device_node(home, tmp_path):
    fifo = tmp_path / "pipe.parquet"
    os.mkfifo(fifo)
    _one_line(_o3viz(home, "library", "export", "--parquet", str(fifo), "--overwrite"), "FIFO")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    node = tmp_path / "null.parquet"
    try:
        os.mknod(node, stat.S_IFCHR | 0o600, os.makedev(1, 3))  # /dev/null's numbers
    except PermissionError:
        pytest.skip("creating a device node needs root")
    _one_line(_o3viz(home, "library", "export", "--parquet", str(node), "--overwrite"), "character device")
    assert stat.S_ISCHR(os.lstat(node).st_mode)


def test_a_planted_temp_file_symlink_is_not_followed(home, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    target = tmp_path / "steps.parquet"
    (tmp_path / ".steps.parquet.tmp").symlink_to(victim)
    assert _o3viz(home, "library", "export", "--parquet", str(target)).returncode == 0
    assert victim.read_text() == "keep me" and pq.read_table(target).num_rows > 0
