"""Process isolation for running untrusted (model-generated) code: the only place o3viz starts it.

``run_sandboxed(job)`` starts ``o3viz/_sandbox_runner.py`` in a fresh process, in a fresh temporary
working directory, with a scrubbed environment, and returns what it reported. Three isolation
modes, best first (``auto`` picks the first that passes a self-test):

- ``bubblewrap``: bwrap with new user, PID, network, IPC and UTS namespaces, a read-only root that
  holds only /usr and the interpreter, the working directory as the one writable place,
  ``--die-with-parent``; plus the runner's rlimits. As root, bwrap itself runs as a fresh
  unprivileged uid so that RLIMIT_NPROC binds (root ignores it).
- ``landlock+rlimits``: no namespaces; Landlock confines the file system to reading system dirs and
  writing the working directory, denies TCP bind/connect and signals to outside processes.
- ``rlimits``: resource limits only, plus the fresh uid when the app runs as root.

What each mode does NOT stop is in ``describe_isolation(mode)`` and docs/sandbox.md. Results come
back on a separate pipe as HMAC-tagged records, so printing or exiting early cannot fake a pass.
"""

from __future__ import annotations

import functools
import hmac
import marshal
import math
import os
import secrets
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from o3viz.errors import UsageError

IsolationMode = Literal["bubblewrap", "landlock+rlimits", "rlimits"]
ISOLATION_MODES: tuple[str, ...] = ("bubblewrap", "landlock+rlimits", "rlimits")
RUNNER_MARKER = "o3viz-sandbox-runner"  # argv[1] of every sandboxed process, so tests can find strays
_RUNNER_SOURCE = Path(__file__).with_name("runner.py").read_text(encoding="utf-8")
_SYSTEM_READ_PATHS = ("/usr", "/bin", "/lib", "/lib64", "/sbin", "/etc/localtime")
_DEV_PATHS = ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/random")
_UID_BASE, _UID_SPAN = 0x50000000, 0x0FFFFFFF  # fresh uids, far above any real account
_BWRAP_HOME = "/sandbox"
_RESULTS_CAP = 16 << 20  # bytes of result records kept
_POLL_S = 0.1  # how often to check whether the runner has exited while pipes stay open
_DRAIN_GRACE_S = 2.0  # after a kill, how long to wait for the pipes to close
_SETPRIV = shutil.which("setpriv", path="/usr/bin:/bin")

_DESCRIPTIONS = {
    "bubblewrap": (
        "bubblewrap: own user, PID, network, IPC and UTS namespaces; a read-only root holding only "
        "/usr and the interpreter; one private writable directory; CPU, memory, file-size and process "
        "limits; a wall-clock kill. Not stopped: CPU and memory use up to the limits, filling the disk "
        "with many files in the private directory, kernel exploits, and forging results by reading "
        "the harness's memory from inside the same process."
    ),
    "landlock+rlimits": (
        "Landlock + rlimits (no bubblewrap): files are readable only under system directories and "
        "writable only in the private directory; TCP bind/connect (Landlock ABI 4+) and signals to "
        "outside processes (ABI 6+) are denied; CPU, memory, file-size and process limits; a "
        "wall-clock kill. Not stopped: UDP and other non-TCP networking, connecting to Unix sockets by "
        "path, filling the disk, kernel exploits, forging results from inside the same process."
    ),
    "rlimits": (
        "rlimits only (no bubblewrap, no Landlock): CPU, memory, file-size and process limits, a "
        "wall-clock kill, and a fresh unprivileged uid when the app runs as root. Not stopped: network "
        "access, reading any world-readable file (the project and its data included), creating files "
        "in world-writable directories such as /tmp; if the app is not root, also signalling the app, "
        "reading its environment, and processes escaping the clean-up with setsid."
    ),
}


def describe_isolation(mode: str) -> str:
    """Say in one paragraph what the sandbox in ``mode`` stops and what it does not."""
    if mode not in _DESCRIPTIONS:
        raise UsageError(f"isolation: unknown mode {mode!r}; use one of {', '.join(ISOLATION_MODES)}")
    return _DESCRIPTIONS[mode]


@dataclass(frozen=True)
class SandboxLimits:
    """What one sandboxed run may use. Defaults suit HumanEval/MBPP-sized functions."""

    timeout_s: float = 10.0  # wall clock for the whole run; then the process group is killed
    test_timeout_s: float | None = None  # per test (SIGALRM in the runner); None: only timeout_s
    cpu_s: int | None = None  # RLIMIT_CPU; None: ceil(timeout_s) + 1
    memory_mb: int = 1024  # RLIMIT_AS (virtual address space)
    file_size_mb: int = 16  # RLIMIT_FSIZE: the largest file the code may write
    max_procs: int = 32  # RLIMIT_NPROC: processes and threads together
    max_open_files: int = 256  # RLIMIT_NOFILE
    output_cap: int = 32_768  # bytes kept from each of stdout and stderr; the rest is read and dropped

    def __post_init__(self) -> None:
        for name in ("timeout_s", "memory_mb", "file_size_mb", "max_procs", "max_open_files", "output_cap"):
            if not getattr(self, name) > 0:
                raise UsageError(f"limits.{name}: must be > 0 (got {getattr(self, name)!r})")


@dataclass
class SandboxRun:
    """What came back from one sandboxed process."""

    records: list[dict[str, Any]]  # verified runner records, in order
    isolation: str
    duration_s: float
    stdout: str
    stderr: str
    stdout_truncated: bool
    stderr_truncated: bool
    exit_code: int | None  # negative: killed by that signal
    timed_out: bool
    forged_lines: int  # result-pipe lines whose HMAC did not verify
    info: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class _Python:
    executable: str
    prefixes: tuple[str, ...]  # install prefixes outside /usr that must be readable
    version: str


def _fresh_uid() -> int | None:
    """A never-used unprivileged uid when we are root (so RLIMIT_NPROC binds), else None."""
    return _UID_BASE + secrets.randbelow(_UID_SPAN) if os.geteuid() == 0 else None


def _probe_python(executable: str, uid: int | None) -> _Python | None:
    code = "import sys,resource,_sha256,marshal;print(sys.prefix);print(sys.exec_prefix);print(sys.version.split()[0])"
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
    return _Python(executable, prefixes, lines[2])


@functools.cache
def find_python() -> _Python:
    """The interpreter sandboxed code runs on: the app's own if an unprivileged uid can run it."""
    uid = _fresh_uid()
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


def _bwrap_argv(python: _Python, work: str) -> list[str]:
    argv = ["bwrap", "--unshare-user", "--uid", "65534", "--gid", "65534", "--unshare-pid"]
    argv += ["--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    argv += ["--die-with-parent", "--new-session", "--hostname", "sandbox"]
    for path in _SYSTEM_READ_PATHS:
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        else:
            argv += ["--ro-bind-try", path, path]
    for prefix in python.prefixes:
        argv += ["--ro-bind", prefix, prefix]
    argv += ["--proc", "/proc", "--dev", "/dev", "--bind", work, _BWRAP_HOME, "--chdir", _BWRAP_HOME]
    return argv + ["--remount-ro", "/", "--"]


def _command(mode: str, python: _Python, work: str) -> tuple[list[str], dict[str, str]]:
    home = _BWRAP_HOME if mode == "bubblewrap" else work
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
    argv = [python.executable, "-s", "-S", "-c", _RUNNER_SOURCE, RUNNER_MARKER]
    if mode == "bubblewrap":
        argv = _bwrap_argv(python, work) + argv
    return argv, env


def _user_tasks(uid: int) -> int:
    """Processes+threads that uid runs now: RLIMIT_NPROC counts them all when we cannot switch uid."""
    total = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    total += len(os.listdir(f"/proc/{entry.name}/task"))
            except OSError:
                continue
    return total


def _job_payload(
    job: dict, mode: str, limits: SandboxLimits, python: _Python, work: str, uid: int | None
) -> dict:
    procs = limits.max_procs
    if mode == "bubblewrap":
        procs += 2  # bwrap's own init and the runner count inside the namespace
    elif uid is None:
        procs += _user_tasks(os.getuid())
    payload = dict(job)
    payload.update(
        cpu_s=limits.cpu_s or math.ceil(limits.timeout_s) + 1,
        memory_bytes=limits.memory_mb << 20,
        file_size_bytes=limits.file_size_mb << 20,
        max_procs=procs,
        max_open_files=limits.max_open_files,
        test_timeout_s=float(limits.test_timeout_s or 0.0),
        landlock=mode == "landlock+rlimits",
        read_paths=list(_SYSTEM_READ_PATHS + python.prefixes),
        write_paths=[work],
        dev_paths=list(_DEV_PATHS),
    )
    return payload


def _kill_uid(uid: int) -> None:
    """SIGKILL every process running as ``uid``; repeated because one may fork while we scan."""
    for _ in range(5):
        found = False
        for entry in os.scandir("/proc"):
            try:
                if entry.name.isdigit() and entry.stat().st_uid == uid:
                    os.kill(int(entry.name), signal.SIGKILL)
                    found = True
            except OSError:
                continue
        if not found:
            return


def _kill_group(pgid: int, uid: int | None) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass  # the group is already gone
    if uid is not None:
        _kill_uid(uid)


def _verify_records(raw: bytes, key: bytes) -> tuple[list[dict[str, Any]], int]:
    """Parse result lines, keeping only those whose HMAC verifies; count the rest."""
    records: list[dict[str, Any]] = []
    forged = 0
    for line in raw.split(b"\n"):
        if not line:
            continue
        body_hex, _, tag = line.partition(b" ")
        try:
            body = bytes.fromhex(body_hex.decode("ascii"))
            good = hmac.compare_digest(hmac.new(key, body, "sha256").hexdigest().encode(), tag)
        except (ValueError, UnicodeDecodeError):
            good = False
        record = marshal.loads(body) if good else None  # only bytes our runner wrote get unmarshalled
        if isinstance(record, dict) and record.get("n") == len(records):
            records.append(record)
        else:
            forged += 1
    return records, forged


def run_sandboxed(
    job: dict[str, Any], *, isolation: str = "auto", limits: SandboxLimits | None = None
) -> SandboxRun:
    """Run one runner job (see _sandbox_runner.py) in a fresh sandbox and return what it reported."""
    return _run_in_mode(job, resolve_isolation(isolation), limits or SandboxLimits())


def _run_in_mode(job: dict[str, Any], mode: str, limits: SandboxLimits) -> SandboxRun:
    python = find_python()
    uid = _fresh_uid()
    key = secrets.token_bytes(32)
    root = tempfile.mkdtemp(prefix="o3viz-sbx-")  # 0700: the code cannot reach its siblings
    work = os.path.join(root, "work")
    os.mkdir(work, 0o700)
    try:
        if uid is not None:
            os.chmod(root, 0o711)  # the fresh uid may pass through to work/, not list or write here
            os.chown(work, uid, uid)
        payload = _job_payload(job, mode, limits, python, work, uid)
        pumped = _start_and_pump(mode, python, work, uid, payload, key, limits)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    records, forged = _verify_records(pumped.results.data, key)
    return SandboxRun(
        records=records,
        isolation=mode,
        duration_s=pumped.duration_s,
        stdout=pumped.stdout.data.decode("utf-8", "replace"),
        stderr=pumped.stderr.data.decode("utf-8", "replace"),
        stdout_truncated=pumped.stdout.truncated,
        stderr_truncated=pumped.stderr.truncated,
        exit_code=pumped.exit_code,
        timed_out=pumped.timed_out,
        forged_lines=forged,
        info={
            "python": python.version,
            "uid_switched": uid is not None,
            "results_truncated": pumped.results.truncated,
        },
    )


def _start_and_pump(
    mode: str, python: _Python, work: str, uid: int | None, payload: dict, key: bytes, limits: SandboxLimits
) -> _Pumped:
    argv, env = _command(mode, python, work)
    user: dict[str, Any] = {}
    if uid is not None and _SETPRIV:
        # setpriv keeps Popen on its vfork path (user= forces a full fork of a possibly huge app).
        argv = [_SETPRIV, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--no-new-privs", "--", *argv]
    elif uid is not None:
        user = {"user": uid, "group": uid, "extra_groups": []}
    res_r, res_w = os.pipe()
    try:
        payload.update(key=key, fd=res_w)
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(res_w,),
            cwd=work,
            env=env,
            start_new_session=True,  # so one killpg reaches everything it forked
            **user,
        )
    finally:
        os.close(res_w)
    with proc:  # closes the pipes and reaps the process on the way out
        try:
            return _pump(proc, res_r, marshal.dumps(payload, 2), limits, lambda: _kill_group(proc.pid, uid))
        except BaseException:
            _kill_group(proc.pid, uid)  # or Popen.__exit__ would wait on a process that may never end
            raise
        finally:
            os.close(res_r)


class _Capture:
    """Keeps the first ``cap`` bytes of a stream and drops the rest, so output cannot fill memory."""

    def __init__(self, cap: int) -> None:
        self.data = bytearray()
        self.cap = cap
        self.truncated = False

    def add(self, chunk: bytes) -> None:
        room = self.cap - len(self.data)
        if room > 0:
            self.data += chunk[:room]
        if len(chunk) > room:
            self.truncated = True


@dataclass
class _Pumped:
    stdout: _Capture
    stderr: _Capture
    results: _Capture
    exit_code: int | None = None
    timed_out: bool = False
    duration_s: float = 0.0


def _has_exited(pid: int) -> bool:
    """True once pid is a zombie; WNOWAIT leaves it unreaped so its process group id stays ours."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _pump(
    proc: subprocess.Popen, res_r: int, payload: bytes, limits: SandboxLimits, kill: Callable[[], None]
) -> _Pumped:
    """Feed the job, drain three pipes until EOF, and kill on the deadline or when the runner exits."""
    start = time.monotonic()
    deadline = start + limits.timeout_s
    out = _Pumped(_Capture(limits.output_cap), _Capture(limits.output_cap), _Capture(_RESULTS_CAP))
    readers = {proc.stdout.fileno(): out.stdout, proc.stderr.fileno(): out.stderr, res_r: out.results}
    sel = selectors.DefaultSelector()
    for fd in readers:
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ)
    sel.register(proc.stdin.fileno(), selectors.EVENT_WRITE)
    pending, stop_at, idle = memoryview(payload), None, False
    while sel.get_map():
        now = time.monotonic()
        # Only an idle pipe prompts the exit check: strays still holding a pipe after the runner
        # exited would keep it open forever, so they are killed and the pipes drained briefly.
        if stop_at is None and (now >= deadline or (idle and _has_exited(proc.pid))):
            out.timed_out = now >= deadline
            kill()
            stop_at = now + _DRAIN_GRACE_S
        if stop_at is not None and now >= stop_at:
            break
        events = sel.select(timeout=max(0.0, min(_POLL_S, (stop_at or deadline) - now)))
        idle = not events
        for key, _ in events:
            if key.fd in readers:
                _read_into(sel, key.fd, readers[key.fd])
            else:
                pending = _write_some(sel, proc, pending)
    sel.close()
    kill()  # also reaches processes that hold no pipe
    out.exit_code = proc.wait()
    out.duration_s = time.monotonic() - start
    return out


def _read_into(sel: selectors.BaseSelector, fd: int, capture: _Capture) -> None:
    try:
        chunk = os.read(fd, 1 << 16)
    except BlockingIOError:
        return
    if chunk:
        capture.add(chunk)
    else:
        sel.unregister(fd)


def _write_some(sel: selectors.BaseSelector, proc: subprocess.Popen, pending: memoryview) -> memoryview:
    try:
        pending = pending[os.write(proc.stdin.fileno(), pending[: 1 << 16]) :]
    except BlockingIOError:
        return pending
    except OSError:
        pending = pending[:0]  # the process is gone; its missing results will say so
    if not pending:
        sel.unregister(proc.stdin.fileno())
        proc.stdin.close()
    return pending


_SELF_TEST_JOB = {
    "code": "def f():\n    return 1\n",
    "test_module": "",
    "entry_point": "f",
    "candidate_name": "candidate",
    "scope": "module",
    "steps": [{"src": "assert candidate() == 1"}],
}
_self_test_lock = threading.Lock()


@functools.cache
def _self_test(mode: str) -> bool:
    if mode == "bubblewrap" and shutil.which("bwrap") is None:
        return False
    if mode == "landlock+rlimits" and landlock_abi() < 1:
        return False
    try:
        run = _run_in_mode(_SELF_TEST_JOB, mode, SandboxLimits(timeout_s=20.0))
    except (OSError, UsageError):
        return False
    ends = [r for r in run.records if r.get("k") == "end"]
    return len(ends) == 1 and ends[0].get("s") == "pass"


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, or 0 when Landlock is unavailable."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        return max(0, int(libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))))
    except (OSError, AttributeError):
        return 0


def available_isolation() -> list[str]:
    """The isolation modes that pass their self-test on this machine, best first."""
    with _self_test_lock:
        return [mode for mode in ISOLATION_MODES if _self_test(mode)]


def resolve_isolation(isolation: str = "auto") -> str:
    """Turn ``auto`` into the best working mode; reject a named mode that does not work here."""
    if isolation == "auto":
        working = available_isolation()
        if not working:
            raise UsageError("sandbox: no isolation mode works on this machine (not even rlimits)")
        return working[0]
    if isolation not in ISOLATION_MODES:
        raise UsageError(
            f"isolation: unknown mode {isolation!r}; use auto or one of {', '.join(ISOLATION_MODES)}"
        )
    with _self_test_lock:
        if not _self_test(isolation):
            raise UsageError(f"isolation: {isolation} does not work on this machine; use isolation='auto'")
    return isolation
