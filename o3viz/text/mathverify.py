"""Math-Verify (huggingface/math-verify, the grader open-r1 and lighteval use) behind o3viz's
bounds: ``math_verify_equivalent(answer, reference)`` is its verdict, or None where it gives none
in bounds.

Math-Verify parses LaTeX with antlr and compares with sympy, and a hostile expression
(``9^{9^{9^9}}``, a polynomial to the millionth power) can keep sympy busy for hours or eat the
machine's memory. Its own timeouts use ``signal.alarm``, which refuses to run outside the main
thread (Streamlit runs every page in a thread). So it runs here in one child process
(``o3viz.text.mathverify_worker``), shared by every thread of this process:

- each request waits at most ``DEADLINE_S``; past it the child is killed and the verdict is None
  (the next request starts a fresh child);
- the child's address space is capped (``mathverify_worker.MEMORY_BYTES``);
- an answer longer than ``MAX_PARSE_CHARS``, or one that ``looks_hostile`` (a huge or stacked
  exponent, a big factorial), is never sent: its verdict is None at once;
- a child that cannot start (no Math-Verify installed, no ``sys.executable``) is not retried: every
  verdict is None and ``status()`` says why.

Requests from several threads take turns on one lock; the caller caches verdicts. A forked
process (the bulk importer's workers) forgets its parent's child and starts its own.
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import re
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

DEADLINE_S = 10.0  # one comparison; Math-Verify takes about 20 ms a side, far less than this
START_DEADLINE_S = 120.0  # importing sympy and Math-Verify in a fresh child, on a loaded machine
MAX_PARSE_CHARS = 400  # a longer answer is not parsed (the longest case in its own tests has 120)
_WORKER = Path(__file__).with_name("mathverify_worker.py")

__all__ = [
    "DEADLINE_S",
    "MAX_PARSE_CHARS",
    "WorkerStatus",
    "looks_hostile",
    "math_verify_equivalent",
    "math_verify_value",
    "prestart",
    "status",
    "worker_pid",
]

# an exponent of 4+ digits, an exponent that holds an exponent or a factorial, a factorial of a
# 4+ digit number or of a bracket, a double factorial; each is linear to find (no nested repeats)
_HOSTILE = re.compile(
    r"\^\s*[{(]?\s*-?\d{4}"
    r"|\^\s*\{[^{}]{0,200}[\^!]"
    r"|\^\s*\([^()]{0,200}[\^!]"
    r"|\^\s*[\w.]+\s*\^"
    r"|\*\*\s*[\w.(]+\s*\*\*"
    r"|\d{4}\s*!|[)}]\s*!|!!"
    r"|\\(?:binom|choose)\s*\{?\s*\d{4}"
)


@dataclass
class WorkerStatus:
    """What the Math-Verify child has done in this process."""

    requests: int = 0  # sent to the child
    timeouts: int = 0  # past DEADLINE_S: the child was killed
    starts: int = 0  # children started
    unavailable: str | None = None  # why no child can run here (None: it can)


class _Worker:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.proc: subprocess.Popen | None = None
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.ready = False  # the child has imported Math-Verify
        self.status = WorkerStatus()

    def ask(self, request: dict, deadline: float) -> dict | None:
        """The child's reply to ``request``, or None (no child, past ``deadline``, or it died)."""
        with self.lock:
            if not self._ready():
                return None
            assert self.proc is not None and self.proc.stdin is not None
            self.status.requests += 1
            try:
                self.proc.stdin.write(json.dumps(request) + "\n")
                self.proc.stdin.flush()
                line = self.lines.get(timeout=deadline)
            except (OSError, queue.Empty):
                line = None
            if line is None:  # past the deadline, or the child died (out of memory)
                self.status.timeouts += 1
                self._stop()
                return None
            return json.loads(line)

    def _ready(self) -> bool:
        """Whether a child is up and has said "ready" (started here, and waited for, if need be)."""
        if self.status.unavailable is not None or (self.proc is None and not self._spawn()):
            return False
        if not self.ready:
            try:
                self.ready = self.lines.get(timeout=START_DEADLINE_S) == "ready"
            except queue.Empty:
                pass
            if not self.ready:
                self._stop()
                self.status.unavailable = "the Math-Verify child did not start (is math-verify installed?)"
        return self.ready

    def _spawn(self) -> bool:
        if not sys.executable:
            self.status.unavailable = "no Python executable to start the Math-Verify child"
            return False
        self.lines, self.ready = queue.Queue(), False
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-u", str(_WORKER)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                encoding="utf-8",
            )
        except OSError as exc:
            self.status.unavailable = f"the Math-Verify child did not start: {exc}"
            return False
        self.status.starts += 1
        threading.Thread(target=_pump, args=(self.proc, self.lines), daemon=True).start()
        return True

    def _stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            for pipe in (self.proc.stdin, self.proc.stdout):
                if pipe is not None:
                    pipe.close()
            self.proc = None


def _pump(proc: subprocess.Popen, lines: queue.Queue) -> None:
    """The child's stdout as lines on ``lines``; None once it ends."""
    try:
        for line in proc.stdout:  # type: ignore[union-attr]
            lines.put(line.strip())
    except (OSError, ValueError):
        pass
    lines.put(None)


_worker = _Worker()
atexit.register(lambda: _worker._stop())


def _forget_parents_child() -> None:
    """In a forked process (the bulk importer's workers): the parent's child, its pipe reader and
    its lock belong to the parent; this process starts its own child when it first needs one."""
    global _worker
    _worker = _Worker()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_parents_child)


def looks_hostile(s: str) -> bool:
    """Whether ``s`` holds math whose value sympy could spend unbounded time or memory on.

    >>> looks_hostile("9^9^9^9"), looks_hostile("9^{9^{9}}"), looks_hostile("2^{10}"), looks_hostile("5!")
    (True, True, False, False)
    """
    return _HOSTILE.search(s) is not None


def math_verify_equivalent(answer: str, reference: str, deadline: float = DEADLINE_S) -> bool | None:
    """Math-Verify's verdict on ``answer`` against ``reference`` (the gold), or None: it read
    nothing, the text is too long or hostile, it ran past ``deadline`` seconds, or it is absent."""
    if (
        max(len(answer), len(reference)) > MAX_PARSE_CHARS
        or looks_hostile(answer)
        or looks_hostile(reference)
    ):
        return None
    reply = _worker.ask({"answer": answer, "reference": reference}, deadline) or {}
    same = reply.get("same")
    return same if isinstance(same, bool) else None


def math_verify_value(s: str, deadline: float = DEADLINE_S) -> tuple[bool, float | None]:
    """What Math-Verify reads ``s`` as: ``(True, v)`` one real constant ``v`` (``3!``,
    ``12\\text{ cm}``), ``(True, None)`` something else (a set, a relation, a symbol), ``(False,
    None)`` no verdict in bounds (as ``math_verify_equivalent``)."""
    if len(s) > MAX_PARSE_CHARS or looks_hostile(s):
        return False, None
    reply = _worker.ask({"value": s}, deadline) or {}
    v = reply.get("value")
    if reply.get("known") is not True or not (v is None or isinstance(v, (int, float))):
        return False, None
    return True, (float(v) if v is not None else None)


def worker_pid() -> int | None:
    """The pid of this process's Math-Verify child while one runs (None otherwise): a long-lived
    helper that checks for stray processes leave aside."""
    proc = _worker.proc
    return proc.pid if proc is not None and proc.poll() is None else None


def prestart() -> None:
    """Start the child now, without waiting for it (it imports Math-Verify in the background), so
    that the first comparison finds it ready; a child already up is kept."""
    with _worker.lock:
        if _worker.proc is None and _worker.status.unavailable is None:
            _worker._spawn()


def status() -> WorkerStatus:
    """A copy of the child's counters (for benchmarks and tests)."""
    s = _worker.status
    return WorkerStatus(s.requests, s.timeouts, s.starts, s.unavailable)
