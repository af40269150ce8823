"""``python -m o3viz export TRACE --format openinference --out F``: a trace in another tool's
format. ``openinference``: OpenInference spans as OTLP/JSON (one span per round and per step,
checks as evaluations), for Phoenix, Langfuse or any OpenTelemetry collector."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from o3viz.cli._trace_arg import TRACE_HELP, open_trace
from o3viz.errors import UsageError

FORMATS = ("openinference",)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "export",
        help="export a trace for another tool (OpenInference spans for Phoenix / Langfuse)",
        description="Write a trace in another tool's format. openinference: OTLP/JSON spans with "
        "OpenInference attributes, one span per round and per step, checks as evaluations.",
    )
    p.add_argument("file", type=Path, help=TRACE_HELP)
    p.add_argument(
        "--format", choices=FORMATS, default="openinference", help="what to write (default openinference)"
    )
    p.add_argument("--out", type=Path, required=True, help="the output file (.json)")
    p.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from o3viz.importers.openinference import export_openinference
    from o3viz.trace.files import check_output, write_atomic

    if args.out.suffix != ".json":
        raise UsageError(f"--out: {args.out.name} must end in .json")
    check_output(args.out, args.overwrite)  # before reading: a bad --out fails at once
    src = open_trace(args.file)
    doc = export_openinference(src.trace)
    write_atomic(args.out, json.dumps(doc, ensure_ascii=False).encode("utf-8"), overwrite=args.overwrite)
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    print(f"exported {len(spans)} OpenInference spans from {src.name} -> {args.out}")
    return 0
