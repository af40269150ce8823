"""The isolation modes: what each stops, which interpreter runs sandboxed code, and the command
line that starts one sandboxed process in a mode. ``run.py`` starts them; this module only builds.

- ``bubblewrap``: bwrap with new user, PID, network, IPC and UTS namespaces, a read-only root that
  holds only /usr and the interpreter, a size-capped tmpfs as the one writable folder, a small
  tmpfs on /dev/shm and a read-only /dev, ``--die-with-parent``; plus the process's own rlimits.
  As root, bwrap itself runs as a fresh unprivileged uid so that RLIMIT_NPROC binds.
- ``landlock+rlimits``: no namespaces; Landlock confines the file system to reading system dirs and
  writing the process's own folder, denies TCP bind/connect and signals to outside processes.
- ``rlimits``: resource limits only, plus a fresh uid per process when the app runs as root.
"""

from __future__ import annotations

import functools
import os
import secrets
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from o3viz.errors import UsageError

IsolationMode = Literal["bubblewrap", "landlock+rlimits", "rlimits"]
ISOLATION_MODES: tuple[str, ...] = ("bubblewrap", "landlock+rlimits", "rlimits")
RUNNER_MARKER = "o3viz-sandbox-runner"  # argv[1] of every sandboxed process, so tests can find strays
SYSTEM_READ_PATHS = ("/usr", "/bin", "/lib", "/lib64", "/sbin", "/etc/localtime")
DEV_PATHS = ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/random")
SHARED_WRITABLE = ("/tmp", "/var/tmp", "/dev/shm")  # where a fresh uid could leave files (rlimits mode)
BWRAP_HOME = "/sandbox"
SHM_BYTES = 1 << 20  # /dev/shm inside bubblewrap
_UID_BASE, _UID_SPAN = 0x50000000, 0x0FFFFFFF  # fresh uids, far above any real account
_INSIDE = Path(__file__).with_name("inside")


def _source(*names: str) -> str:
    return "\n\n".join((_INSIDE / f"{n}.py").read_text(encoding="utf-8") for n in names)


# The two programs, each one ``python -c`` source: the plain-data codec and the confinement first.
JUDGE_SOURCE = _source("plain", "confine", "proxy", "trusted_tests")
CANDIDATE_SOURCE = _source("plain", "confine", "candidate")

_DESCRIPTIONS = {
    "bubblewrap": (
        "bubblewrap: the tests and the code run in two separate sandboxes that exchange plain data "
        "only; each has its own user, PID, network, IPC and UTS namespaces, a read-only root holding "
        "only /usr and the interpreter, one private writable folder (a tmpfs capped at the disk "
        "limit), a 1 MiB /dev/shm, CPU, memory, file-size and process limits, and a wall-clock kill. "
        "Not stopped: CPU and memory use up to the limits, kernel exploits."
    ),
    "landlock+rlimits": (
        "Landlock + rlimits (no bubblewrap): the tests and the code run in two separate processes that "
        "exchange plain data only; files are readable only under system directories and writable "
        "only in the process's private folder, whose size is watched and capped (checked every "
        "0.05 s); TCP bind/connect (Landlock ABI 4+) and signals to outside processes (ABI 6+) are "
        "denied; CPU, memory, file-size and process limits; a wall-clock kill. Not stopped: UDP and "
        "other non-TCP networking, connecting to Unix sockets by path, kernel exploits."
    ),
    "rlimits": (
        "rlimits only (no bubblewrap, no Landlock): the tests and the code run in two separate "
        "processes that exchange plain data only; CPU, memory, file-size and process limits, a "
        "wall-clock kill, a size-watched private folder, and a fresh unprivileged uid per process "
        "when the app runs as root (then files it leaves in /tmp or /dev/shm are counted and "
        "removed). Not stopped: network access, reading any world-readable file (the project and its "
        "data included); if the app is not root, also filling /tmp or /dev/shm, signalling the app, "
        "reading its environment, and processes escaping the clean-up with setsid."
    ),
}


def describe_isolation(mode: str) -> str:
    """Say in one paragraph what the sandbox in ``mode`` stops and what it does not."""
    if mode not in _DESCRIPTIONS:
        raise UsageError(f"isolation: unknown mode {mode!r}; use one of {', '.join(ISOLATION_MODES)}")
    return _DESCRIPTIONS[mode]


@dataclass(frozen=True)
class Python:
    """The interpreter sandboxed code runs on."""

    executable: str
    prefixes: tuple[str, ...]  # install prefixes outside /usr that must be readable
    version: str


def fresh_uid() -> int | None:
    """A never-used unprivileged uid when we are root (so RLIMIT_NPROC binds), else None."""
    return _UID_BASE + secrets.randbelow(_UID_SPAN) if os.geteuid() == 0 else None


def _probe_python(executable: str, uid: int | None) -> Python | None:
    code = "import sys,resource,_sha256,marshal,json;print(sys.prefix);print(sys.exec_prefix);print(sys.version.split()[0])"
    kwargs = {"user": uid, "group": uid, "extra_groups": []} if uid is not None else {}
    try:
        out = subprocess.run(
            [executable, "-s", "-S", "-c", code],
            capture_output=True,
            text=True,
            timeout=10,
            cwd="/",
            env={"PATH": "/usr/bin:/bin"},
            **kwargs,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    lines = out.stdout.split()
    if out.returncode != 0 or len(lines) != 3:
        return None
    prefixes = tuple(sorted({p for p in lines[:2] if p != "/usr" and not p.startswith("/usr/")}))
    return Python(executable, prefixes, lines[2])


@functools.cache
def find_python() -> Python:
    """The interpreter sandboxed code runs on: the app's own if an unprivileged uid can run it."""
    uid = fresh_uid()
    seen: list[str] = []
    for cand in (
        getattr(sys, "_base_executable", ""),
        sys.executable,
        "/usr/bin/python3",
        "/usr/local/bin/python3",
    ):
        real = os.path.realpath(cand) if cand else ""
        if real and real not in seen and os.access(real, os.X_OK):
            seen.append(real)
            found = _probe_python(real, uid)
            if found is not None:
                return found
    raise UsageError(
        f"sandbox: no Python interpreter usable by an unprivileged user (tried {', '.join(seen)})"
    )


def _bwrap_argv(python: Python, disk_bytes: int) -> list[str]:
    argv = ["bwrap", "--unshare-user", "--uid", "65534", "--gid", "65534", "--unshare-pid"]
    argv += ["--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    argv += ["--die-with-parent", "--new-session", "--hostname", "sandbox"]
    for path in SYSTEM_READ_PATHS:
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        else:
            argv += ["--ro-bind-try", path, path]
    for prefix in python.prefixes:
        argv += ["--ro-bind", prefix, prefix]
    argv += ["--proc", "/proc", "--dev", "/dev", "--size", str(SHM_BYTES), "--tmpfs", "/dev/shm"]
    argv += ["--remount-ro", "/dev"]  # bwrap's /dev is a RAM tmpfs as large as half the host's memory
    argv += ["--size", str(disk_bytes), "--tmpfs", BWRAP_HOME, "--chdir", BWRAP_HOME]
    return argv + ["--remount-ro", "/", "--"]


def command(
    mode: str, python: Python, work: str, source: str, disk_bytes: int
) -> tuple[list[str], dict[str, str]]:
    """argv and environment for one sandboxed process running ``source``."""
    home = BWRAP_HOME if mode == "bubblewrap" else work
    # Not `-I`: it forces a random hash seed, and verdicts must not depend on set order. The
    # environment is built from nothing, so -I's other effects are had with -s, -S and these.
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "TMPDIR": home,
        "LANG": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "PYTHONSAFEPATH": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONIOENCODING": "utf-8",
    }
    argv = [python.executable, "-s", "-S", "-c", source, RUNNER_MARKER]
    if mode == "bubblewrap":
        argv = _bwrap_argv(python, disk_bytes) + argv
    return argv, env


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, or 0 when Landlock is unavailable."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        return max(0, int(libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))))
    except (OSError, AttributeError):
        return 0


def mode_prerequisite(mode: str) -> bool:
    """Whether the tools a mode needs are here at all (its self-test says whether it works)."""
    if mode == "bubblewrap":
        return shutil.which("bwrap") is not None
    if mode == "landlock+rlimits":
        return landlock_abi() >= 1
    return True
