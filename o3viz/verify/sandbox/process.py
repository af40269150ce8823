"""Starting sandboxed processes and watching them: feed each its job on stdin, drain every pipe as
it comes (keeping only the first bytes), and kill them all on the deadline, when the judge exits,
or when a watchdog (the disk limit) says so. Killing reaches the whole process group, and as root
every process of the run's fresh uids. ``verify_records`` keeps the judge's records whose HMAC
verifies."""

from __future__ import annotations

import hmac
import marshal
import os
import selectors
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

_POLL_S = 0.1  # how often to check whether the judge has exited while pipes stay open
_DRAIN_GRACE_S = 2.0  # after a kill, how long to wait for the pipes to close
SETPRIV = shutil.which("setpriv", path="/usr/bin:/bin")


class Capture:
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

    def text(self) -> str:
        return self.data.decode("utf-8", "replace")


@dataclass
class Child:
    """One sandboxed process and what it has said so far."""

    name: str  # "judge" or "candidate"
    popen: subprocess.Popen
    uid: int | None
    stdout: Capture
    stderr: Capture
    pending: memoryview  # job bytes still to write to its stdin
    exit_code: int | None = None  # negative: killed by that signal


@dataclass
class Pumped:
    results: Capture
    timed_out: bool = False
    stopped_for: str = ""  # the watchdog's reason, when it stopped the run
    duration_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


def spawn(
    name: str,
    argv: list[str],
    env: dict,
    cwd: str,
    uid: int | None,
    pass_fds: tuple,
    payload: bytes,
    cap: int,
    prefix: list[str] | None = None,
) -> Child:
    """Start one process in its own session (so one killpg reaches all it forks). ``prefix`` runs
    first, as the app's user (the memory guard's join of a cgroup), and then execs the rest."""
    user: dict[str, Any] = {}
    if uid is not None and SETPRIV:
        # setpriv keeps Popen on its vfork path (user= forces a full fork of a possibly huge app).
        argv = [SETPRIV, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--no-new-privs", "--", *argv]
    elif uid is not None:
        user = {"user": uid, "group": uid, "extra_groups": []}
    argv = [*(prefix or []), *argv]
    popen = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        pass_fds=pass_fds,
        cwd=cwd,
        env=env,
        start_new_session=True,
        **user,
    )
    return Child(name, popen, uid, Capture(cap), Capture(cap), memoryview(payload))


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


def kill(child: Child) -> None:
    try:
        os.killpg(child.popen.pid, signal.SIGKILL)
    except OSError:
        pass  # the group is already gone
    if child.uid is not None:
        _kill_uid(child.uid)


def kill_all(children: list[Child], also: Callable[[], None] | None = None) -> None:
    for child in children:  # the judge first: it must not report a candidate killed by us
        kill(child)
    if also is not None:
        also()


def _has_exited(pid: int) -> bool:
    """True once pid is a zombie; WNOWAIT leaves it unreaped so its process group id stays ours."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


@dataclass
class _Loop:
    sel: selectors.BaseSelector
    readers: dict[int, Capture]
    writers: dict[int, Child]


def _register(children: list[Child], results_fd: int, results: Capture) -> _Loop:
    loop = _Loop(selectors.DefaultSelector(), {results_fd: results}, {})
    for child in children:
        loop.readers[child.popen.stdout.fileno()] = child.stdout
        loop.readers[child.popen.stderr.fileno()] = child.stderr
        loop.writers[child.popen.stdin.fileno()] = child
    for fd in loop.readers:
        os.set_blocking(fd, False)
        loop.sel.register(fd, selectors.EVENT_READ)
    for fd in loop.writers:
        os.set_blocking(fd, False)
        loop.sel.register(fd, selectors.EVENT_WRITE)
    return loop


def pump(
    children: list[Child],
    results_fd: int,
    results_cap: int,
    timeout_s: float,
    watch: Callable[[], str] | None = None,
    also_kill: Callable[[], None] | None = None,
    watch_every_s: float = 0.05,
) -> Pumped:
    """Run until the judge (``children[0]``) exits, the deadline passes or ``watch`` returns a reason.
    ``also_kill`` reaches processes that left the process groups (the memory guard's members)."""
    start = time.monotonic()
    deadline, next_watch = start + timeout_s, start + watch_every_s
    out = Pumped(Capture(results_cap))
    loop = _register(children, results_fd, out.results)
    stop_at, idle, next_exit_check = None, False, start + _POLL_S
    while loop.sel.get_map():
        now = time.monotonic()
        if stop_at is None and watch is not None and now >= next_watch:
            next_watch = now + watch_every_s
            out.stopped_for = watch()
        # An idle pipe, or every _POLL_S however busy the pipes are, prompts the exit check:
        # strays still holding a pipe after the judge exited (one flooding stdout, say) would keep
        # it open forever, so they are killed and the pipes drained briefly.
        judge_done = False
        if idle or now >= next_exit_check:
            next_exit_check = now + _POLL_S
            judge_done = _has_exited(children[0].popen.pid)
        if stop_at is None and (now >= deadline or judge_done or out.stopped_for):
            out.timed_out = now >= deadline and not judge_done
            kill_all(children, also_kill)
            stop_at = now + _DRAIN_GRACE_S
        if stop_at is not None and now >= stop_at:
            break
        wait = min(_POLL_S, (stop_at or deadline) - now, max(0.0, next_watch - now) if watch else _POLL_S)
        events = loop.sel.select(timeout=max(0.0, wait))
        idle = not events
        for key, _ in events:
            if key.fd in loop.readers:
                _read_into(loop.sel, key.fd, loop.readers[key.fd])
            else:
                _write_some(loop.sel, loop.writers[key.fd])
    loop.sel.close()
    kill_all(children, also_kill)  # also reaches processes that hold no pipe
    for child in children:
        child.exit_code = child.popen.wait()
    out.duration_s = time.monotonic() - start
    return out


def _read_into(sel: selectors.BaseSelector, fd: int, capture: Capture) -> None:
    try:
        chunk = os.read(fd, 1 << 16)
    except BlockingIOError:
        return
    if chunk:
        capture.add(chunk)
    else:
        sel.unregister(fd)


def _write_some(sel: selectors.BaseSelector, child: Child) -> None:
    stdin = child.popen.stdin
    try:
        child.pending = child.pending[os.write(stdin.fileno(), child.pending[: 1 << 16]) :]
    except BlockingIOError:
        return
    except OSError:
        child.pending = child.pending[:0]  # the process is gone; its missing results will say so
    if not child.pending:
        sel.unregister(stdin.fileno())
        stdin.close()


def verify_records(raw: bytes, key: bytes) -> tuple[list[dict[str, Any]], int]:
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
        record = marshal.loads(body) if good else None  # only bytes our judge wrote get unmarshalled
        if isinstance(record, dict) and record.get("n") == len(records):
            records.append(record)
        else:
            forged += 1
    return records, forged
