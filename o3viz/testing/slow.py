"""Deliberately slow work for tests of the app worker: a pure-Python loop that holds the
interpreter lock, as a slow checker does on hostile input."""

from __future__ import annotations

import time


def hold_interpreter(seconds: float) -> float:
    """Spin for ``seconds`` without releasing the GIL between bytecodes for long; return the time spent."""
    start = time.monotonic()
    n = 0
    while time.monotonic() - start < seconds:
        for _ in range(10_000):
            n += 1
    return time.monotonic() - start
