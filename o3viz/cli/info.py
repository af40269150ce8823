"""``python -m o3viz info FILE [--json]``: a trace's model, counts, verdicts, size and schema."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from o3viz.analysis.summary import summarize


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "info",
        help="summarize a trace file",
        description="Print a trace file's model, token and "
        "step counts, decision points, verdict counts, file size and schema version.",
    )
    p.add_argument("file", type=Path, help="a .o3trace.json or .o3trace.json.gz file")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from o3viz.trace.files import read_bounded
    from o3viz.trace.io import MAX_FILE_BYTES, parse_trace_bytes

    data = read_bounded(args.file, MAX_FILE_BYTES)
    summary = summarize(parse_trace_bytes(data), file_bytes=len(data)).to_dict()
    if args.json:
        print(json.dumps(summary, ensure_ascii=False))
        return 0
    width = max(len(k) for k in summary)
    for key, value in summary.items():
        print(f"{key:<{width}}  {value}")
    return 0
