"""The child process behind ``o3viz.text.mathverify``: it reads one JSON request a line on stdin,
``{"answer": …, "reference": …}``, and writes one JSON reply a line on stdout, ``{"same": true |
false | null}`` (null: Math-Verify read neither side as math). It prints ``ready`` once Math-Verify
is imported, and ends when stdin closes.

It runs as a plain script (``python mathverify_worker.py``), not as ``o3viz.text.…``, so that it
imports Math-Verify and sympy and nothing of o3viz. Its address space is capped (``MEMORY_BYTES``):
a hostile expression that sympy expands without end fails here with ``MemoryError``, and the
parent's deadline bounds its time. Math-Verify's own signal-based timeouts are off
(``parsing_timeout=None``, ``timeout_seconds=None``): the parent bounds each request.
"""

from __future__ import annotations

import json
import logging
import sys

MEMORY_BYTES = 2 * 1024**3  # sympy + antlr need about 300 MB; the rest is room for one comparison
_DELIMITERS = ("$", "\\(", "\\[", "\\boxed")

__all__ = ["MEMORY_BYTES", "compare", "main"]


def _limit_memory() -> None:
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    except (ImportError, ValueError, OSError):
        pass  # not on this platform: the parent's deadline still bounds the time


def _as_math(s: str) -> str:
    """An answer as Math-Verify reads math: inside ``$…$`` unless it is already delimited."""
    return s if any(d in s for d in _DELIMITERS) else f"${s}$"


def compare(answer: str, reference: str) -> bool | None:
    """Math-Verify's verdict on ``answer`` against ``reference`` (the gold), None when it parses
    either side to nothing."""
    from math_verify import parse, verify

    gold = parse(_as_math(reference), parsing_timeout=None)
    pred = parse(_as_math(answer), parsing_timeout=None)
    if not gold or not pred:
        return None
    return bool(verify(gold, pred, timeout_seconds=None))


def main() -> int:
    _limit_memory()
    logging.disable(logging.WARNING)  # its "timeout is disabled" warning: the parent bounds time
    import math_verify  # noqa: F401 (imported once, before "ready")

    print("ready", flush=True)
    for line in sys.stdin:
        try:
            req = json.loads(line)
            same = compare(str(req["answer"]), str(req["reference"]))
        except (MemoryError, RecursionError, Exception):  # noqa: BLE001 (any failure: no verdict)
            same = None
        print(json.dumps({"same": same}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
