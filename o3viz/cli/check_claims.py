"""``python -m o3viz check-claims [FILE|-] [--jsonl]``: check the arithmetic a text states.

Prints every claim as JSON (a list, or one object per line with ``--jsonl``) and exits 0, also
when claims are wrong: the verdicts are the output, not an error.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap

from o3viz.errors import O3vizError
from o3viz.trace.files import read_bounded
from o3viz.trace.io import MAX_FILE_BYTES
from o3viz.verify.claims.check import check_text
from o3viz.verify.claims.round_checks import CHECKS


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "check-claims",
        help="check the arithmetic in a reasoning text; prints one JSON object per claim",
        description=textwrap.fill(
            "Find arithmetic claims (a = b chains, GSM8K <<calc>> annotations, "
            "'20% of 50 is 10', 'twelve times three is thirty-six', LaTeX) in a text and check each "
            "exactly. Verdicts: correct, wrong, unverifiable (with a note such as 'too large'). "
            "Numeric text past the checker's budget is named on stderr.",
            88,
        ),
        epilog="Whole-text checks (--list, --skip):\n" + CHECKS.describe(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", nargs="?", default="-", help="text file, or - for stdin (default)")
    p.add_argument("--jsonl", action="store_true", help="one JSON object per line")
    p.add_argument(
        "--skip",
        action="append",
        default=[],
        metavar="CHECK",
        help="a whole-text check not to run (repeatable)",
    )
    p.add_argument("--list", action="store_true", help="list the whole-text checks and exit")
    p.set_defaults(func=run)


def read_text(name: str) -> str:
    """The UTF-8 text of ``name`` ("-" for stdin), bounded by the input limit; else one O3vizError line."""
    data = read_bounded(name, MAX_FILE_BYTES)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise O3vizError(f"{name}: not UTF-8 text (byte {exc.start})") from None


def run(args: argparse.Namespace) -> int:
    if args.list:
        print(CHECKS.describe())
        return 0
    report = check_text(read_text(args.file), skip=tuple(args.skip))
    if report.status != "ok":
        sys.stderr.write(f"note: {report.status}\n")
    claims = [c.to_dict() for c in report.claims]
    if args.jsonl:
        for d in claims:
            sys.stdout.write(json.dumps(d, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(json.dumps(claims, ensure_ascii=False, indent=1) + "\n")
    return 0
