"""Running one job in the sandbox: the only place o3viz starts untrusted (model-generated) code.

``run_sandboxed(job)`` starts two processes under the chosen isolation (``isolation.py``), each in
a fresh folder with a scrubbed environment:

- the **judge** (``inside/trusted_tests.py``) runs the trusted tests (from the dataset) and reports each
  result as an HMAC-tagged record on a pipe of its own;
- the **candidate** (``inside/candidate.py``) runs the untrusted code and answers the judge's
  calls over a second pair of pipes, in plain data only (``inside/plain.py``).

The app never relays between them and never reads what the candidate sends the judge. A job with
``trusted_code`` instead of ``candidate_code`` (reference solutions, for expected outputs) runs in
the judge alone. Resources are bounded whatever the code does: rlimits in both processes, a
wall-clock kill of both process groups, a disk cap (a size-capped tmpfs under bubblewrap, a
watchdog on the folder elsewhere), and a clean-up that handles any directory depth.
"""

from __future__ import annotations

import functools
import marshal
import math
import os
import secrets
import tempfile
import threading
from dataclasses import dataclass, field
from typing import Any

from o3viz.errors import UsageError
from o3viz.verify.sandbox import cleanup
from o3viz.verify.sandbox.isolation import (
    CANDIDATE_SOURCE,
    DEV_PATHS,
    ISOLATION_MODES,
    JUDGE_SOURCE,
    RUNNER_MARKER,
    SHARED_WRITABLE,
    SYSTEM_READ_PATHS,
    IsolationMode,
    Python,
    command,
    describe_isolation,
    find_python,
    fresh_uid,
    landlock_abi,
    mode_prerequisite,
)
from o3viz.verify.sandbox.memory import GUARDS, MemoryGuard, open_guard
from o3viz.verify.sandbox.process import SETPRIV, Child, kill, pump, spawn, verify_records

__all__ = [
    "ISOLATION_MODES",
    "RUNNER_MARKER",
    "IsolationMode",
    "SandboxLimits",
    "SandboxRun",
    "available_isolation",
    "describe_isolation",
    "find_python",
    "landlock_abi",
    "resolve_isolation",
    "run_sandboxed",
]

_RESULTS_CAP = 16 << 20  # bytes of result records kept
_MESSAGE_CAP = 16 << 20  # largest judge<->candidate message
_JUDGE_DISK_MB = 8  # the judge runs trusted tests: a small private folder is plenty
_ALARM_MARGIN_S = 0.5  # the judge's per-step alarm trails the candidate's per-call one


@dataclass(frozen=True)
class SandboxLimits:
    """What one sandboxed run may use (each of its two processes). Defaults suit HumanEval/MBPP."""

    timeout_s: float = 10.0  # wall clock for the whole run; then both process groups are killed
    test_timeout_s: float | None = None  # per test (SIGALRM in the processes); None: only timeout_s
    cpu_s: int | None = None  # RLIMIT_CPU; None: ceil(timeout_s) + 1
    memory_mb: int = 1024  # RLIMIT_AS (virtual address space)
    file_size_mb: int = 16  # RLIMIT_FSIZE: the largest file the code may write
    disk_mb: int = 64  # all the code's files together (tmpfs size, or the watchdog's cap)
    max_procs: int = 32  # RLIMIT_NPROC: processes and threads together
    max_open_files: int = 256  # RLIMIT_NOFILE
    output_cap: int = 32_768  # bytes kept from each of stdout and stderr; the rest is read and dropped
    # RAM for the whole verdict: every process of both sides, anonymous, shared, memfd and SysV
    # pages together (memory.py); None: memory_mb + disk_mb + 64 (the judge, the interpreters).
    total_memory_mb: int | None = None
    memory_guard: str = (
        "auto"  # auto (a leaf cgroup where one can be made, else the watchdog), cgroup, watchdog
    )

    @property
    def verdict_memory_bytes(self) -> int:
        return (self.total_memory_mb or self.memory_mb + self.disk_mb + 64) << 20

    def __post_init__(self) -> None:
        if self.total_memory_mb is not None and not self.total_memory_mb > 0:
            raise UsageError(f"limits.total_memory_mb: must be > 0 (got {self.total_memory_mb!r})")
        if self.memory_guard not in GUARDS:
            raise UsageError(
                f"limits.memory_guard: use one of {', '.join(GUARDS)} (got {self.memory_guard!r})"
            )
        for name in (
            "timeout_s",
            "memory_mb",
            "file_size_mb",
            "disk_mb",
            "max_procs",
            "max_open_files",
            "output_cap",
        ):
            if not getattr(self, name) > 0:
                raise UsageError(f"limits.{name}: must be > 0 (got {getattr(self, name)!r})")


@dataclass
class SandboxRun:
    """What came back from one sandboxed run."""

    records: list[dict[str, Any]]  # the judge's verified records, in order
    isolation: str
    duration_s: float
    stdout: str  # the candidate's (the judge's, for a reference job)
    stderr: str
    stdout_truncated: bool
    stderr_truncated: bool
    exit_code: int | None  # the judge's; negative: killed by that signal
    timed_out: bool
    forged_lines: int  # result-pipe lines whose HMAC did not verify
    stopped_for: str = ""  # a limit that ended the run early (the disk cap), else ""
    candidate_exit_code: int | None = None
    info: dict[str, Any] = field(default_factory=dict)


def run_sandboxed(
    job: dict[str, Any], *, isolation: str = "auto", limits: SandboxLimits | None = None
) -> SandboxRun:
    """Run one job (see inside/trusted_tests.py) in a fresh sandbox and return what the judge reported."""
    if "code" in job:
        raise UsageError("sandbox job: say candidate_code (untrusted) or trusted_code (reference), not code")
    return _run_in_mode(job, resolve_isolation(isolation), limits or SandboxLimits())


@dataclass
class _Side:
    """One of the two processes, before it starts."""

    name: str
    work: str
    uid: int | None
    payload: dict[str, Any]
    source: str
    disk_mb: int
    fds: tuple[int, ...] = ()


def _confinement(mode: str, limits: SandboxLimits, python: Python, work: str, uid: int | None) -> dict:
    procs = limits.max_procs
    if mode == "bubblewrap":
        procs += 2  # bwrap's own init and the process itself count inside the namespace
    elif uid is None:
        procs += _user_tasks(os.getuid())
    return {
        "cpu_s": limits.cpu_s or math.ceil(limits.timeout_s) + 1,
        "memory_bytes": limits.memory_mb << 20,
        "file_size_bytes": limits.file_size_mb << 20,
        "max_procs": procs,
        "max_open_files": limits.max_open_files,
        "landlock": mode == "landlock+rlimits",
        "read_paths": list(SYSTEM_READ_PATHS + python.prefixes),
        "write_paths": [work],
        "dev_paths": list(DEV_PATHS),
        "message_cap": _MESSAGE_CAP,
    }


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


def _make_work(root: str, name: str, uid: int | None) -> str:
    work = os.path.join(root, name)
    os.mkdir(work, 0o700)
    if uid is not None:
        os.chown(work, uid, uid)
    return work


def _sides(job: dict, mode: str, limits: SandboxLimits, python: Python, root: str) -> list[_Side]:
    split = "candidate_code" in job
    judge_uid = fresh_uid()
    judge_work = _make_work(root, "judge", judge_uid)
    judge = {k: v for k, v in job.items() if k != "candidate_code"}
    judge.update(_confinement(mode, limits, python, judge_work, judge_uid))
    judge["test_timeout_s"] = float(limits.test_timeout_s or 0.0)
    # Only when judge and candidate share a uid outside namespaces can one read the other's memory.
    judge["nondumpable"] = split and mode == "rlimits" and judge_uid is None
    sides = [_Side("judge", judge_work, judge_uid, judge, JUDGE_SOURCE, _JUDGE_DISK_MB)]
    if not split:
        return sides
    judge["alarm_s"] = judge["test_timeout_s"] + _ALARM_MARGIN_S if limits.test_timeout_s else 0.0
    cand_uid = fresh_uid()
    cand_work = _make_work(root, "candidate", cand_uid)
    cand = {"code": job["candidate_code"], "entry_point": job.get("entry_point")}
    cand.update(_confinement(mode, limits, python, cand_work, cand_uid))
    cand["call_timeout_s"] = float(limits.test_timeout_s or 0.0)
    sides.append(_Side("candidate", cand_work, cand_uid, cand, CANDIDATE_SOURCE, limits.disk_mb))
    return sides


def _wire(sides: list[_Side]) -> list[int]:
    """The two pipes between judge and candidate; returns the fds to close here once both started."""
    if len(sides) < 2:
        return []
    req_r, req_w = os.pipe()
    resp_r, resp_w = os.pipe()
    judge, cand = sides
    judge.payload.update(req_fd=req_w, resp_fd=resp_r)
    judge.fds += (req_w, resp_r)
    cand.payload.update(req_fd=req_r, resp_fd=resp_w)
    cand.fds += (req_r, resp_w)
    return [req_r, req_w, resp_r, resp_w]


def _run_in_mode(job: dict[str, Any], mode: str, limits: SandboxLimits) -> SandboxRun:
    python = find_python()
    # 0700: the code cannot reach its siblings; named for the host process, as the cgroup leaf is
    root = tempfile.mkdtemp(prefix=f"o3viz-sbx-{os.getpid()}-")
    sides: list[_Side] = []
    guard: MemoryGuard | None = None
    try:
        if os.geteuid() == 0:
            os.chmod(root, 0o711)  # fresh uids may pass through to their folder, not list or write here
        sides = _sides(job, mode, limits, python, root)
        uids = frozenset(side.uid for side in sides if side.uid is not None)
        try:
            guard = open_guard(limits.verdict_memory_bytes, limits.memory_guard, uids, not uids or SETPRIV)
        except ValueError as exc:
            raise UsageError(f"limits.memory_guard: {exc}") from None
        return _start_and_collect(sides, mode, limits, python, guard)
    finally:
        left = guard.close() if guard is not None else 0
        left += cleanup.remove_tree(root)
        for side in sides:
            if side.uid is not None and mode == "rlimits":
                for path in cleanup.owned_entries(SHARED_WRITABLE, side.uid):
                    left += cleanup.remove_path(path)
        _CLEANUP_LEFT[0] += left


_CLEANUP_LEFT = [0]  # entries clean-up could not remove, over this process's life (tests read it)


def _start_and_collect(
    sides: list[_Side], mode: str, limits: SandboxLimits, python: Python, guard: MemoryGuard
) -> SandboxRun:
    key = secrets.token_bytes(32)
    res_r, res_w = os.pipe()
    sides[0].payload.update(key=key, fd=res_w)
    sides[0].fds += (res_w,)
    to_close = [res_w, *_wire(sides)]
    children: list[Child] = []
    try:
        for side in sides:
            argv, env = command(mode, python, side.work, side.source, side.disk_mb << 20)
            payload = marshal.dumps(side.payload, 2)
            child = spawn(
                side.name,
                argv,
                env,
                side.work,
                side.uid,
                side.fds,
                payload,
                limits.output_cap,
                guard.prefix(),
            )
            children.append(child)
            guard.roots.add(child.popen.pid)
    except BaseException:
        for child in children:
            kill(child)
            child.popen.wait()
        os.close(res_r)
        raise
    finally:
        for fd in to_close:
            os.close(fd)
    disk = None if mode == "bubblewrap" or len(sides) < 2 else _disk_watch(sides[1], mode)
    try:
        pumped = pump(children, res_r, _RESULTS_CAP, limits.timeout_s, _watch(disk, guard), guard.kill)
    finally:
        os.close(res_r)
        for child in children:
            for stream in (child.popen.stdin, child.popen.stdout, child.popen.stderr):
                if stream and not stream.closed:
                    stream.close()
    pumped.stopped_for = pumped.stopped_for or guard.check()  # an OOM kill in the last moments
    pumped.extra = {
        "memory_guard": guard.kind,
        "memory_limit_mb": guard.limit >> 20,
        "memory_peak_mb": round((guard.cgroup_peak() if guard.leaf else guard.peak) / 2**20, 1),
    }
    return _collect(children, pumped, key, mode, python)


def _disk_watch(cand: _Side, mode: str) -> Any:
    extra = (SHARED_WRITABLE, cand.uid) if cand.uid is not None and mode == "rlimits" else None
    return cleanup.disk_watch(cand.work, cand.disk_mb, extra)


def _watch(disk: Any, guard: MemoryGuard) -> Any:
    """The pump's check every 0.05 s: the disk cap outside bubblewrap, then the memory bound."""
    return lambda: (disk() if disk else "") or guard.check()


def _collect(children: list[Child], pumped: Any, key: bytes, mode: str, python: Python) -> SandboxRun:
    records, forged = verify_records(bytes(pumped.results.data), key)
    judge, shown = children[0], children[-1]
    stderr = shown.stderr.text()
    if len(children) > 1 and judge.stderr.data:
        stderr += ("\n" if stderr else "") + "[tests] " + judge.stderr.text()
    return SandboxRun(
        records=records,
        isolation=mode,
        duration_s=pumped.duration_s,
        stdout=shown.stdout.text(),
        stderr=stderr,
        stdout_truncated=shown.stdout.truncated,
        stderr_truncated=shown.stderr.truncated,
        exit_code=judge.exit_code,
        timed_out=pumped.timed_out,
        forged_lines=forged,
        stopped_for=pumped.stopped_for,
        candidate_exit_code=children[1].exit_code if len(children) > 1 else None,
        info={
            "python": python.version,
            "uid_switched": judge.uid is not None,
            "results_truncated": pumped.results.truncated,
            "processes": len(children),
            **pumped.extra,
        },
    )


_SELF_TEST_JOB = {
    "candidate_code": "def f():\n    return 1\n",
    "test_module": "",
    "entry_point": "f",
    "candidate_name": "candidate",
    "scope": "module",
    "steps": [{"src": "assert candidate() == 1"}],
}
_self_test_lock = threading.Lock()


@functools.cache
def _self_test(mode: str) -> bool:
    if not mode_prerequisite(mode):
        return False
    try:
        run = _run_in_mode(dict(_SELF_TEST_JOB), mode, SandboxLimits(timeout_s=20.0))
    except (OSError, UsageError):
        return False
    ends = [r for r in run.records if r.get("k") == "end"]
    return len(ends) == 1 and ends[0].get("s") == "pass"


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
