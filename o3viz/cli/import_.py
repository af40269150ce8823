"""``python -m o3viz import FILE --out F``: import a reasoning trace another model produced
(DeepSeek-R1 ``<think>`` text, OpenAI / Anthropic / DeepSeek API JSON, JSON/JSONL datasets, plain
thinking text) as an o3viz trace, optionally enriched with a local model's attention."""

from __future__ import annotations

import argparse
from pathlib import Path

from o3viz.cli.run import check_out
from o3viz.run.config import parse_layers


def register(sub: argparse._SubParsersAction) -> None:
    from o3viz.importers import FORMATS

    p = sub.add_parser(
        "import",
        help="import an external reasoning trace (R1, OpenAI, Anthropic, datasets)",
        description="Import a reasoning trace produced elsewhere: detect its format, split and type "
        "its steps, build the reasoning tree, check its arithmetic and final answer, and save it "
        "as a trace file. --enrich teacher-forces it through a local model for attention.",
    )
    p.add_argument("file", type=Path, help="the trace to import (text, JSON or JSONL; .gz accepted)")
    p.add_argument("--format", choices=FORMATS, help="skip detection and read the file as this format")
    p.add_argument("--record", type=int, help="record index in a JSON/JSONL dataset (default 0)")
    p.add_argument("--reference", help="the correct final answer, to check the imported answer against")
    p.add_argument("--question", help="the question, when the file does not hold it")
    for name in ("text", "question", "answer", "reference"):
        p.add_argument(f"--{name}-field", help=f"dataset field (dotted path) holding the {name}")
    p.add_argument("--no-claims", action="store_true", help="skip the arithmetic claim checks")
    p.add_argument("--enrich", action="store_true", help="teacher-force through a local model for attention")
    p.add_argument("--model", help="model for --enrich (default: the embedded SmolLM2-135M-Instruct)")
    p.add_argument(
        "--layers",
        default="none",
        help="layers whose per-head rows --enrich keeps: none (default), auto, all, or e.g. 0,15,29",
    )
    p.add_argument("--window", type=int, help="tokens per forward pass for --enrich (default: model context)")
    p.add_argument(
        "--out", type=Path, required=True, help="output trace file (.o3trace.json or .o3trace.json.gz)"
    )
    p.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from o3viz.importers import import_trace

    check_out(args.out, args.overwrite)
    layers = parse_layers(args.layers)
    options = {"window": args.window} if args.window else {}
    trace = import_trace(
        args.file,
        format=args.format,
        record=args.record,
        reference=args.reference,
        question=args.question,
        text_field=args.text_field,
        question_field=args.question_field,
        answer_field=args.answer_field,
        reference_field=args.reference_field,
        claims=not args.no_claims,
        enrich=args.enrich,
        model=args.model,
        layers=layers,
        **options,
    )
    path = trace.save(args.out, overwrite=args.overwrite)
    rnd, src = trace.final, trace.provenance.source
    claims = [c for c in rnd.checks if c.kind == "claim"]
    wrong = sum(c.verdict == "wrong" for c in claims)
    answer = next((c for c in rnd.checks if c.kind == "answer"), None)
    print(
        f"imported {src.get('format')} from {src.get('file', args.file.name)}"
        f"{'' if src.get('record') is None else ' record ' + str(src['record'])}: {len(rnd.steps)} steps, "
        f"answer {rnd.answer!r} ({answer.verdict if answer else 'unverifiable'}), {len(claims)} claims "
        f"({wrong} wrong){', enriched' if rnd.attention is not None else ''} -> {path}"
    )
    return 0
