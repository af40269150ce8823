"""``python -m o3viz check-claims [FILE|-] [--jsonl]``: check the arithmetic a text states.

Prints every claim as JSON (a list, or one object per line with ``--jsonl``) and exits 0, also
when claims are wrong: the verdicts are the output, not an error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from o3viz.errors import O3vizError
from o3viz.verify.claims.check import check_claims


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "check-claims",
        help="check the arithmetic in a reasoning text; prints one JSON object per claim",
        description="Find arithmetic claims (a = b chains, GSM8K <<calc>> annotations, "
        "'20%% of 50 is 10', LaTeX) in a text and check each exactly.",
    )
    p.add_argument("file", nargs="?", default="-", help="text file, or - for stdin (default)")
    p.add_argument("--jsonl", action="store_true", help="one JSON object per line")
    p.set_defaults(func=run)


def read_text(name: str) -> str:
    """The text of ``name`` ("-" for stdin); a missing or unreadable file is an O3vizError."""
    if name == "-":
        return sys.stdin.read()
    path = Path(name)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise O3vizError(f"{name}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise O3vizError(f"{name}: cannot read ({type(exc).__name__})") from None


def run(args: argparse.Namespace) -> int:
    claims = [c.to_dict() for c in check_claims(read_text(args.file))]
    if args.jsonl:
        for d in claims:
            sys.stdout.write(json.dumps(d, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(json.dumps(claims, ensure_ascii=False, indent=1) + "\n")
    return 0
