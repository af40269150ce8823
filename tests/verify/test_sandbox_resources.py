"""Bounded resources, measured from outside: whatever the code writes, the host's shared memory
(/proc/meminfo Shmem) and its temp folder grow by at most the sandbox's disk cap plus slack, a
verdict always comes back, and nothing is left behind. Also the clean-up on its own."""

from __future__ import annotations

import os
import tempfile
import threading
import time
from pathlib import Path

import pytest

from o3viz.verify.code import verify_code
from o3viz.verify.sandbox.cleanup import remove_tree, tree_usage
from o3viz.verify.sandbox.run import ISOLATION_MODES, SandboxLimits, available_isolation

pytestmark = [pytest.mark.subprocess]

WORKING = available_isolation()
MODES = [
    pytest.param(m, marks=pytest.mark.skipif(m not in WORKING, reason=f"{m} does not work on this machine"))
    for m in ISOLATION_MODES
]
DISK_MB = 32
SLACK_MB = 160  # other processes on a shared machine, and the watchdog's 50 ms between looks
TMP = tempfile.gettempdir()


def _shmem() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("Shmem:"):
            return int(line.split()[1]) * 1024
    return 0


def _tmp_used() -> int:
    st = os.statvfs(TMP)
    return (st.f_blocks - st.f_bfree) * st.f_frsize


class Peak:
    """Samples Shmem and the temp folder's file system every 20 ms while a run goes on."""

    def __init__(self) -> None:
        self.base = (_shmem(), _tmp_used())
        self.peak = self.base
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            now = (_shmem(), _tmp_used())
            self.peak = (max(self.peak[0], now[0]), max(self.peak[1], now[1]))

    def stop(self) -> tuple[float, float]:
        """Growth in MB of (Shmem, temp folder) at its highest."""
        self._stop.set()
        self._thread.join()
        return ((self.peak[0] - self.base[0]) / 2**20, (self.peak[1] - self.base[1]) / 2**20)


def _leftovers() -> set[str]:
    return {p.name for p in Path(TMP).glob(f"o3viz-sbx-{os.getpid()}-*")}  # ours, not a parallel suite's


FILL = (
    "import os\n"
    "def fill(folder, total_mb):\n"
    "    written = 0\n"
    "    for i in range(total_mb // 15):\n"
    "        try:\n"
    "            with open(os.path.join(folder, f'f{i}'), 'wb') as fh:\n"
    "                fh.write(b'x' * (15 << 20))\n"
    "            written += 15\n"
    "        except OSError:\n"
    "            pass\n"
    "    return written\n"
)


@pytest.mark.parametrize("mode", MODES)
def test_a_5000_deep_directory_chain_gives_a_verdict_and_is_cleaned_up(mode):
    before = _leftovers()
    code = FILL + (
        "def f():\n"
        "    for _ in range(5000):\n"
        "        os.mkdir('d')\n"
        "        os.chdir('d')\n"
        "    return fill('.', 600)\n"
    )
    peak = Peak()
    start = time.monotonic()
    verdict = verify_code(
        code,
        ["assert f() > 0"],
        entry_point="f",
        isolation=mode,
        timeout_s=20,
        limits=SandboxLimits(disk_mb=DISK_MB),
    )
    shm, disk = peak.stop()
    assert time.monotonic() - start < 25 and verdict.results  # a verdict, in time
    assert _leftovers() == before
    assert shm < DISK_MB + SLACK_MB and disk < DISK_MB + SLACK_MB, (shm, disk, verdict.error)


@pytest.mark.parametrize("mode", MODES)
def test_filling_dev_shm_and_the_work_folder_stays_within_the_cap(mode):
    if mode == "rlimits" and os.geteuid() != 0:
        pytest.skip("rlimits mode without root cannot stop writes to /dev/shm (describe_isolation says so)")
    code = FILL + "def f():\n    return fill('/dev/shm', 1500) + fill('.', 1500)\n"
    peak = Peak()
    verdict = verify_code(
        code,
        ["assert f() > 0"],
        entry_point="f",
        isolation=mode,
        timeout_s=20,
        limits=SandboxLimits(disk_mb=DISK_MB, memory_mb=1024),
    )
    shm, disk = peak.stop()
    assert verdict.results
    assert shm < DISK_MB + SLACK_MB and disk < DISK_MB + SLACK_MB, (shm, disk, verdict.error)
    left = [p for p in Path("/dev/shm").iterdir() if p.name.startswith("f") and p.stat().st_uid >= 0x50000000]
    assert left == []


def test_remove_tree_handles_any_depth_without_recursion(tmp_path):
    root = tmp_path / "deep"
    root.mkdir()
    fd = os.open(root, os.O_RDONLY)
    try:
        for _ in range(5000):  # by descriptor: the full path is far past PATH_MAX
            os.mkdir("d", dir_fd=fd)
            new = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = new
        for i in range(3):
            os.close(os.open(f"x{i}", os.O_CREAT | os.O_WRONLY, dir_fd=fd))
        os.mkdir("locked", mode=0o000, dir_fd=fd)
    finally:
        os.close(fd)
    assert tree_usage(root).entries > 200_000  # deeper than the watchdog walks: counted as over
    assert remove_tree(root) == 0 and not root.exists()


def test_tree_usage_counts_bytes_and_entries(tmp_path):
    (tmp_path / "a").write_bytes(b"x" * 100_000)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b").write_bytes(b"y" * 50_000)
    os.link(tmp_path / "a", tmp_path / "a2")  # counted once
    usage = tree_usage(tmp_path)
    assert usage.entries == 4 and 150_000 <= usage.bytes < 200_000


def test_verify_code_returns_a_verdict_even_when_the_sandbox_itself_fails(monkeypatch):
    import o3viz.verify.code as code

    def broken(*args, **kwargs):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(code, "run_sandboxed", broken)
    verdict = code.verify_code(
        "def f():\n    return 1\n", ["assert f() == 1", "assert f() > 0"], entry_point="f"
    )
    assert not verdict.passed and [r.status for r in verdict.results] == ["error", "error"]
    assert verdict.error.startswith("the sandbox failed: RecursionError")
