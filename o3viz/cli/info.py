"""``python -m o3viz info FILE [--json]``: a trace's model, counts, verdicts, size and schema."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from o3viz.analysis.summary import summarize
from o3viz.cli._trace_arg import TRACE_HELP, open_trace


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "info",
        help="summarize a trace (a file or a store key)",
        description="Print a trace file's model, token and "
        "step counts, decision points, verdict counts, file size and schema version.",
    )
    p.add_argument("file", type=Path, help=TRACE_HELP)
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    src = open_trace(args.file)
    summary = summarize(src.trace, file_bytes=src.file_bytes).to_dict()
    if args.json:
        print(json.dumps(summary, ensure_ascii=False))
        return 0
    width = max(len(k) for k in summary)
    for key, value in summary.items():
        print(f"{key:<{width}}  {'—' if value is None else value}")  # unknown, not "None"
    return 0
