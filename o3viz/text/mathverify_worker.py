"""The child process behind ``o3viz.text.mathverify``: it reads one JSON request a line on stdin and
writes one JSON reply a line on stdout: ``{"answer": …, "reference": …}`` → ``{"same": true | false |
null}`` (null: Math-Verify read a side as nothing); ``{"value": …}`` → ``{"known": …, "value": …}``
(the one real constant Math-Verify reads, see ``value``); ``{}`` when it failed. It prints ``ready`` once Math-Verify
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

__all__ = ["MEMORY_BYTES", "compare", "main", "value"]


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


def value(s: str) -> tuple[bool, float | None]:
    """``(True, v)`` where Math-Verify reads ``s`` as one real constant ``v`` (``3!``, ``12\\text{ cm}``),
    ``(True, None)`` where it reads something else (a set, a relation, a symbol), ``(False, None)``
    where it reads nothing."""
    from math_verify import parse
    from math_verify.grader import is_equation, take_last_relation
    from sympy import Expr

    parsed = parse(_as_math(s), parsing_timeout=None)
    if not parsed:
        return False, None
    expr = parsed[0]
    if is_equation(expr):
        expr = take_last_relation(expr).rhs  # "z = 1 + 1 = 2", "\\frac{NO}{BO} = \\frac{1}{\\sqrt{6}}"
    if not isinstance(expr, Expr) or not expr.is_number:
        return True, None
    v = complex(expr.evalf())
    return True, (v.real if v.imag == 0 else None)


def main() -> int:
    _limit_memory()
    logging.disable(logging.WARNING)  # its "timeout is disabled" warning: the parent bounds time
    import math_verify  # noqa: F401 (imported once, before "ready")

    print("ready", flush=True)
    for line in sys.stdin:
        try:
            req = json.loads(line)
            if "value" in req:
                known, v = value(str(req["value"]))
                reply: dict = {"known": known, "value": v}
            else:
                reply = {"same": compare(str(req["answer"]), str(req["reference"]))}
        except (MemoryError, RecursionError, Exception):  # noqa: BLE001 (any failure: no verdict)
            reply = {}
        print(json.dumps(reply), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
