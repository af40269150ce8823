"""The CLI never hangs and never prints a traceback on special files, unwritable --out, or a race
for one --out: one line on stderr, exit code 2. Real processes (``python -m o3viz``), with a
timeout that turns a hang into a failure."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

from o3viz.errors import O3vizError
from o3viz.testing.builders import small_trace
from o3viz.trace import load_trace
from o3viz.trace.files import OutputExistsError, read_bounded, write_atomic

pytestmark = [pytest.mark.model, pytest.mark.subprocess]


def run_cli(*args: str, stdin=None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "o3viz", *args], capture_output=True, text=True, timeout=timeout, stdin=stdin
    )


def assert_one_line(out: subprocess.CompletedProcess, *words: str) -> None:
    assert out.returncode == 2, (out.returncode, out.stderr)
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr
    for w in words:
        assert w in out.stderr, out.stderr


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "pipe.o3trace.json"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("command", ["info", "check-claims", "compress"])
def test_a_fifo_is_refused_at_once_not_waited_on(fifo, command):
    assert_one_line(run_cli(command, str(fifo), timeout=120), "FIFO", "only regular files")


@pytest.mark.parametrize("command", ["info", "check-claims"])
def test_dev_zero_is_refused_without_reading_it(command):
    assert_one_line(run_cli(command, "/dev/zero", timeout=120), "character device")


def test_stdin_from_dev_zero_stops_at_the_limit():
    with open("/dev/zero", "rb") as zero:
        assert_one_line(run_cli("check-claims", "-", stdin=zero, timeout=60), "stdin", "limit")


def test_a_symlink_to_a_proc_file_is_refused(tmp_path):
    link = tmp_path / "x.o3trace.json"
    link.symlink_to("/proc/self/pagemap")
    assert_one_line(run_cli("info", str(link), timeout=120), "/proc")
    assert_one_line(run_cli("check-claims", str(link), timeout=120), "/proc")


@pytest.fixture
def thinking(tmp_path):
    path = tmp_path / "r1.txt"
    path.write_text("<think>2 + 3 = 5. So the sum is 5.</think>The answer is 5.")
    return path


@pytest.mark.parametrize(
    "out", ["/proc/o3viz.o3trace.json", "/sys/o3viz.o3trace.json", "/proc/self/x/y.o3trace.json"]
)
def test_out_on_proc_or_sys_is_one_line(thinking, out):
    assert_one_line(run_cli("import", str(thinking), "--out", out, "--overwrite"), "--out")


def test_out_onto_a_folder_with_overwrite_is_one_line(thinking, tmp_path):
    folder = tmp_path / "dir.o3trace.json"
    folder.mkdir()
    assert_one_line(run_cli("import", str(thinking), "--out", str(folder), "--overwrite"), "folder")
    assert folder.is_dir()


def test_two_cli_writers_of_one_out_one_wins_the_other_gets_one_line(tmp_path):
    # ~600 KB of thinking, so both runs are busy when they reach the write.
    big = tmp_path / "big.txt"
    big.write_text("<think>" + "Then 2 + 3 = 5, and we go on.\n\n" * 20_000 + "</think>The answer is 5.")
    out = tmp_path / "race.o3trace.json"
    argv = [sys.executable, "-m", "o3viz", "import", str(big), "--no-claims", "--out", str(out)]
    procs = [
        subprocess.Popen(argv, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for _ in range(2)
    ]
    results = [(p.wait(120), p.stderr.read()) for p in procs]
    codes = sorted(code for code, _ in results)
    assert codes == [0, 2], results
    loser = next(err for code, err in results if code == 2)
    assert "Traceback" not in loser and len(loser.strip().splitlines()) == 1 and "exists" in loser
    assert load_trace(out).final.steps  # the winner's file, whole


def _race(path, writers: int) -> tuple[list[bytes], list[str]]:
    wins, losses = [], []
    barrier = threading.Barrier(writers)

    def write(tag: bytes):
        barrier.wait()
        try:
            write_atomic(path, tag * 200_000)
            wins.append(tag)
        except OutputExistsError as exc:
            losses.append(str(exc))

    threads = [threading.Thread(target=write, args=(bytes([65 + i]),)) for i in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return wins, losses


def test_write_atomic_race_never_replaces_and_always_refuses_in_one_line(tmp_path):
    for round_ in range(20):
        path = tmp_path / f"r{round_}.o3trace.json"
        wins, losses = _race(path, 4)
        assert len(wins) == 1 and len(losses) == 3, (wins, losses)
        assert path.read_bytes() == wins[0] * 200_000
        assert all("\n" not in m for m in losses)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no temp files


def test_write_atomic_still_raises_file_exists_for_the_api(tmp_path):
    path = small_trace().save(tmp_path / "t.o3trace.json")
    with pytest.raises(FileExistsError):
        small_trace().save(path)


def test_read_bounded_enforces_the_limit_while_reading(tmp_path):
    path = tmp_path / "f.txt"
    path.write_bytes(b"x" * 100)
    assert read_bounded(path, 100) == b"x" * 100
    with pytest.raises(O3vizError, match="limit of 99 bytes"):
        read_bounded(path, 99)
    with pytest.raises(O3vizError, match="folder"):
        read_bounded(tmp_path, 99)


def test_a_trace_that_load_would_refuse_is_never_written(tmp_path):
    from o3viz.trace.core import MAX_STEPS

    trace = small_trace()
    trace.final.steps = trace.final.steps * (MAX_STEPS // len(trace.final.steps) + 1)
    path = tmp_path / "big.o3trace.json"
    with pytest.raises(O3vizError, match="would not load back.*50000"):
        trace.save(path)
    assert not path.exists() and list(tmp_path.iterdir()) == []
