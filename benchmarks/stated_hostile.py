"""Reading a step's stated answer on hostile text (issue 62 break 5): the time per step of
``o3viz.analysis.answer_reading.read_step`` on hostile steps against prose of the same length,
measured in the same run, at 385, 3,850 and 38,500 characters.

- ``hostile_vs_prose.<kind>.<n>``: that ratio (goal: it stays flat as n grows, linear time);
- ``hostile_ms.<kind>.<n>``: the hostile step's time;
- ``old_pattern_ms.385``: the conclusion regex this replaced, on the 385-character step "So =1=1…=1?x"
  (it backtracked: 20–27 ms on a 2-core machine).
"""

from __future__ import annotations

import argparse
import os
import re
import time

from o3viz.analysis.answer_reading import _STARTS, question_target, read_step

SIZES = (385, 3_850, 38_500)
PROSE = "So we add the two numbers and the total of the apples is 12 apples. "
HOSTILE = {
    "equals_run": lambda n: "So =" + "1=" * ((n - 6) // 2) + "?x",
    "verbs": lambda n: "So " + "is " * ((n - 4) // 3) + "9",
    "brackets": lambda n: "So the answer is " + "(" * (n - 17),
    "clauses": lambda n: "Thus " + "a, " * ((n - 12) // 3) + "x = 4.",
}
# the pattern issue 62 measured (running_answer.py before this fix), kept here as the baseline
_OLD_X = (
    r"(?P<x>\$[^$\n]{1,80}\$|\\\([^\n]{1,80}?\\\)|\\\[[^\n]{1,80}?\\\]"
    r"|-?\$?\d[\d,]*(?:\.\d+)?(?:/\d+)?%?|[^\s.,;:!?<>]{0,40}[\d\\][^\s,;:!?<>]{0,40}?)"
)
_OLD = re.compile(
    r"^\**[^\S\n]*(?:(?:So|Thus)\b[^\n]*?(?:=|\bis|\bequals)|(?:That|It|This)(?:'s|’s|\s+is))[^\S\n]*"
    rf"\$?(?:<<[^<>\n]{{0,200}}>>)?[^\S\n]*{_OLD_X}(?:[^\S\n]+[a-z]+){{0,2}}[^\S\n]*[.!]?\**[^\S\n]*$"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repeat", type=int, default=20, help="reads per step (20)")


def _ms(text: str, repeat: int) -> float:
    target = question_target("What is $x$?")
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(repeat):
            read_step(text, target)
        best = min(best, (time.perf_counter() - t0) / repeat)
    return best * 1000


def run(args: argparse.Namespace) -> int:
    print(f"load_average_1min: {os.getloadavg()[0]:.2f}")
    for kind, make in HOSTILE.items():
        for n in SIZES:
            text = make(n)
            assert _STARTS.match(text), f"{kind}: the hostile step must reach the conclusion rule"
            prose = (PROSE * (n // len(PROSE) + 1))[:n]
            hostile, base = _ms(text, args.repeat), _ms(prose, args.repeat)
            print(f"hostile_ms.{kind}.{n}: {hostile:.3f}")
            print(f"hostile_vs_prose.{kind}.{n}: {hostile / base:.2f}")
    old = HOSTILE["equals_run"](385)
    t0 = time.perf_counter()
    _OLD.match(old)
    print(f"old_pattern_ms.385: {(time.perf_counter() - t0) * 1000:.2f}")
    return 0
