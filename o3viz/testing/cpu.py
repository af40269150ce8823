"""CPU seconds of one call for the bounds tests (``tests/verify/test_claims_bounds.py``,
``tests/text/test_answers.py``), which assert that a check on hostile text stays within a CPU
budget, robustly on a busy machine.

- Counted on the calling thread only (``time.thread_time``): ``time.process_time`` sums every
  thread of the process, so another thread busy meanwhile (a server's, a worker's, a library's
  pool) would be billed to the check.
- Garbage left by earlier code is collected first, outside the measurement.
- ``best_cpu_seconds`` times a call again, up to ``tries`` times, while it is over the budget,
  and returns its best time. Late in CI's 36-minute run a check that takes 0.45 s alone was billed
  2.08 s once: on a shared two-core machine, a burst elsewhere (or a hypervisor's steal counted
  as ours) inflates one measurement, while a check that is really too slow is slow every time.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable


def cpu_seconds(fn: Callable[..., object], *args, **kwargs) -> float:
    """The CPU time ``fn(*args, **kwargs)`` takes on this thread, in seconds."""
    gc.collect()
    t0 = time.thread_time()
    fn(*args, **kwargs)
    return time.thread_time() - t0


def best_cpu_seconds(fn: Callable[..., object], *args, budget: float, tries: int = 3, **kwargs) -> float:
    """``cpu_seconds`` of the call, timed again while it is over ``budget`` (at most ``tries``
    times in all); the best time measured."""
    best = cpu_seconds(fn, *args, **kwargs)
    for _ in range(tries - 1):
        if best <= budget:
            break
        best = min(best, cpu_seconds(fn, *args, **kwargs))
    return best
