"""Run one child process of the peers benchmark under a memory watchdog, and read its answer.

The watchdog polls the child's RSS every 100 ms with psutil and kills it
before it reaches the cap (``CAP_MARGIN`` below it, since RSS can grow between two polls), when
the machine's available memory falls below ``RESERVE`` (other people share it), or when the
child runs past its time limit. RLIMIT_AS is no use here: torch reserves far more address space
than it touches.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

POLL_S = 0.1  # one read of /proc/PID/statm; /proc/meminfo every MEMINFO_EVERY polls
MEMINFO_EVERY = 5
CAP_MARGIN = 2**30  # kill this far below the cap: RSS can grow by hundreds of MB between polls
RESERVE = 1536 * 2**20  # leave the machine at least this much available memory


@dataclass
class ChildOutcome:
    """What one child run gave: its RESULT fields, or why it has none."""

    ok: bool
    result: dict[str, Any] = field(default_factory=dict)
    stopped: str = ""  # "", "memory cap", "machine memory low", "time limit", "error"
    reason: str = ""  # one line: the child's error or why the watchdog stopped it
    watched_peak_mb: float = 0.0  # RSS peak the watchdog saw (whole process, model included)


def parse_output(stdout: str) -> tuple[dict[str, Any] | None, str]:
    """(RESULT fields, "") from a child's stdout, else (None, the error line or a reason)."""
    result, error = None, ""
    for line in stdout.splitlines():
        if line.startswith("RESULT "):
            try:
                result = json.loads(line[len("RESULT ") :])
            except json.JSONDecodeError as exc:
                error = f"unreadable RESULT line ({exc})"
        elif line.startswith("ERROR "):
            try:
                error = str(json.loads(line[len("ERROR ") :]).get("error", "unknown error"))
            except json.JSONDecodeError:
                error = line[len("ERROR ") :][:300]
    if result is not None and not isinstance(result, dict):
        return None, "RESULT line is not an object"
    if result is None and not error:
        error = "the child printed no RESULT line"
    return result, error


def _watch(popen: subprocess.Popen, cap: int, limit_s: float, margin: int) -> tuple[str, float]:
    """Poll until the child exits or must be stopped; (why it was stopped or "", peak RSS bytes)."""
    import psutil

    proc, peak, t0, polls = psutil.Process(popen.pid), 0, time.monotonic(), 0
    while popen.poll() is None:
        polls += 1
        try:
            rss = proc.memory_info().rss  # runners start no processes of their own
        except psutil.Error:
            rss = 0
        peak = max(peak, rss)
        why = ""
        if rss >= cap - margin:
            why = "memory cap"
        elif polls % MEMINFO_EVERY == 0 and psutil.virtual_memory().available < RESERVE:
            why = "machine memory low"
        elif time.monotonic() - t0 > limit_s:
            why = "time limit"
        if why:
            popen.kill()
            popen.wait()
            return why, peak
        time.sleep(POLL_S)
    return "", peak


def run_child(cmd: list[str], cap_bytes: int, limit_s: float, margin: int = CAP_MARGIN) -> ChildOutcome:
    """Run ``cmd`` under the watchdog (killed at ``cap_bytes - margin`` of RSS, or past ``limit_s``);
    stdout is parsed for the RESULT line."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        popen = subprocess.Popen(cmd, stdout=out, stderr=err, text=True)
        try:
            stopped, peak = _watch(popen, cap_bytes, limit_s, margin)
        finally:  # the driver stopped (Ctrl-C, SIGTERM): never leave a child running
            if popen.poll() is None:
                popen.kill()
                popen.wait()
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    peak_mb = peak / 2**20
    if stopped:
        detail = {
            "memory cap": f"RSS reached {peak_mb:,.0f} MB, within {margin >> 20} MB of the {cap_bytes / 2**30:g} GiB cap",
            "machine memory low": f"the machine's available memory fell under {RESERVE >> 20} MB (RSS {peak_mb:,.0f} MB)",
            "time limit": f"still running after {limit_s:g} s",
        }[stopped]
        return ChildOutcome(False, stopped=stopped, reason=f"stopped: {detail}", watched_peak_mb=peak_mb)
    result, error = parse_output(stdout)
    if result is None:
        tail = stderr.strip().splitlines()[-1:] if not error else []
        return ChildOutcome(False, stopped="error", reason=error or (tail[0] if tail else "no output"))
    return ChildOutcome(True, result=result, watched_peak_mb=peak_mb)
