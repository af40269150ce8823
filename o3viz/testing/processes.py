"""The child processes a test may leave behind, for the tests that check none is left
(``tests/app/test_worker.py``, ``tests/verify/test_sandbox_hostile.py``): every child of this
process but the long-lived Math-Verify child that answer grading keeps (``o3viz.text.mathverify``),
which is this process's helper, not the test's leftover."""

from __future__ import annotations

import psutil

from o3viz.text.mathverify import worker_pid

__all__ = ["stray_children"]


def stray_children() -> list[psutil.Process]:
    """This process's children (recursively), less the Math-Verify child and its own children."""
    keep = worker_pid()
    kids = psutil.Process().children(recursive=True)
    if keep is None:
        return kids
    try:
        helper = {keep} | {p.pid for p in psutil.Process(keep).children(recursive=True)}
    except psutil.NoSuchProcess:
        helper = {keep}
    return [p for p in kids if p.pid not in helper]
