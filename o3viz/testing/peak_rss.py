"""Peak memory of a piece of code, measured from outside: the code runs in a fresh Python child
that stops itself (SIGSTOP) after its imports and again when the code is done; at each stop the
parent reads the child's high-water mark (``VmHWM`` in ``/proc/PID/status``) and lets it go on.
Memory tests assert on ``growth``, what the work itself added to the peak.

``VmHWM`` belongs to the child's own address space, which ``exec`` made fresh; ``ru_maxrss`` would
not do: Linux carries the parent's high-water mark into a child across ``fork`` and ``exec``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass

_WRAP = """import os, signal, sys
{setup}
os.kill(os.getpid(), signal.SIGSTOP)
try:
    exec(compile({code!r}, "<measured>", "exec"))
finally:
    sys.stdout.flush(); sys.stderr.flush()
    os.kill(os.getpid(), signal.SIGSTOP)
"""


@dataclass
class Peak:
    """One child run: its high-water mark before and after the work, exit code and output."""

    before: int  # bytes: the peak after the imports, before the work
    peak: int  # bytes: the peak when the work was done
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def growth(self) -> int:
        return self.peak - self.before


def _high_water(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def measure_peak(code: str, *, setup: str = "", timeout: float = 60.0, cwd: str | None = None) -> Peak:
    """Run ``setup`` (imports), then ``code``, in a fresh child. Past ``timeout`` it is stopped, its
    peak so far read, and killed (``returncode`` -9): a run that never ends still has a figure."""
    script = _WRAP.format(setup=setup, code=code)
    marks: list[int] = []
    start = time.monotonic()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen([sys.executable, "-c", script], stdout=out, stderr=err, cwd=cwd)
        expired = threading.Event()

        def expire() -> None:  # stop it first, so its peak so far is read before it is killed
            expired.set()
            os.kill(proc.pid, signal.SIGSTOP)

        timer = threading.Timer(timeout, expire)
        timer.start()
        try:
            while True:
                _, status = os.waitpid(proc.pid, os.WUNTRACED)
                if not os.WIFSTOPPED(status):
                    break
                marks.append(_high_water(proc.pid))
                os.kill(proc.pid, signal.SIGKILL if expired.is_set() else signal.SIGCONT)
        finally:
            timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    before, peak = marks[0] if marks else 0, max(marks, default=0)
    return Peak(before, peak, proc.returncode, stdout, stderr, time.monotonic() - start)
