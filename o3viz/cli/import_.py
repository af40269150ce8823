"""``python -m o3viz import FILE [--out F]``: import a reasoning trace another model produced
(DeepSeek-R1 ``<think>`` text, OpenAI / Anthropic / DeepSeek API JSON, JSON/JSONL datasets, plain
thinking text, Inspect AI ``.eval``/``.json`` logs, Parquet datasets) as an o3viz trace, optionally
enriched with a local model's attention. Without ``--out`` the trace enters the trace store;
``--all --dataset NAME`` imports every record of a JSONL file or JSON array (every sample of an
Inspect log, every row of a Parquet file) into the store, in parallel worker processes."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from o3viz.cli.run import check_out
from o3viz.errors import UsageError
from o3viz.run.config import parse_layers


def register(sub: argparse._SubParsersAction) -> None:
    from o3viz.importers import list_formats

    p = sub.add_parser(
        "import",
        help="import an external reasoning trace (R1, OpenAI, Anthropic, datasets)",
        description="Import a reasoning trace produced elsewhere: detect its format, split and type "
        "its steps, build the reasoning map, check its arithmetic and final answer, and save it "
        "as a trace file. --enrich teacher-forces it through a local model for attention.",
    )
    p.add_argument(
        "file",
        type=Path,
        help="the trace to import (text, JSON, JSONL, an Inspect AI .eval/.json log, Parquet; .gz accepted)",
    )
    p.add_argument("--format", choices=list_formats(), help="skip detection and read the file as this format")
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
        "--out",
        type=Path,
        help="output trace file (.o3trace.json[.gz]); without it the trace enters the store",
    )
    p.add_argument(
        "--all",
        action="store_true",
        help="import every record of a JSONL/JSON dataset, Inspect log or Parquet file into the store",
    )
    p.add_argument("--dataset", help="dataset name the records are grouped under (default: the file's name)")
    p.add_argument(
        "--workers",
        type=int,
        default=min(4, os.cpu_count() or 1),
        help="worker processes for --all (0: none)",
    )
    p.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    p.add_argument(
        "--labels",
        action="store_true",
        help="a step-labelled dataset (MR-GSM8K, PRM800K): store its traces and labels as a named labeller",
    )
    p.add_argument("--by", help="the labeller name for --labels (default: the dataset's annotators)")
    p.add_argument("--limit", type=int, help="with --labels: at most this many traces")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from o3viz.importers import import_trace

    if args.labels:
        return _run_labels(args)
    if args.all:
        return _run_all(args)
    if args.out is not None:
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
    if args.out is not None:
        path = trace.save(args.out, overwrite=args.overwrite)
    else:
        from o3viz.store.store import Store

        store = Store()
        key = store.add(trace, source="import", dataset=args.dataset or "", name=args.file.name)
        path = f"the store as {key} ({store.root})"
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


def _run_all(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from o3viz.importers.bulk import ImportOptions
    from o3viz.importers.parallel import import_dataset
    from o3viz.store.store import Store

    for flag in ("out", "record", "enrich", "format", "reference", "question"):
        if getattr(args, flag) not in (None, False):
            raise UsageError(f"--all imports into the store, one trace per record; drop --{flag}")
    store = Store()
    store.count()  # a store that cannot be opened fails here, before any worker starts
    opts = ImportOptions(
        dataset=args.dataset or args.file.name.split(".")[0],
        text_field=args.text_field,
        question_field=args.question_field,
        answer_field=args.answer_field,
        reference_field=args.reference_field,
        claims=not args.no_claims,
    )
    bar = tqdm(total=0, unit="record", file=sys.stderr, disable=None)

    def progress(done: int, total: int, report) -> None:
        bar.total = total
        bar.n = done
        bar.set_postfix(traces=report.traces, bad=len(report.errors), refresh=False)
        bar.refresh()

    report = import_dataset(args.file, store, opts, workers=args.workers, progress=progress)
    bar.close()
    for err in report.errors[:50]:
        sys.stderr.write(f"{args.file.name}: {err}\n")
    if len(report.errors) > 50:
        sys.stderr.write(f"{args.file.name}: … and {len(report.errors) - 50} more bad records\n")
    rate = report.traces / report.seconds if report.seconds else 0.0
    print(f"imported {report.summary()} in {report.seconds:.1f} s ({rate:.0f} traces/s) -> {store.root}")
    if report.stopped:
        sys.stderr.write(f"o3viz: error: the import stopped: {report.stopped}\n")
        return 2
    return 0


def _run_labels(args: argparse.Namespace) -> int:
    from o3viz.store.golden import import_labelled
    from o3viz.store.store import Store

    for flag in ("out", "record", "enrich", "format", "reference", "question", "all"):
        if getattr(args, flag) not in (None, False):
            raise UsageError(f"--labels imports a labelled dataset into the store; drop --{flag}")
    store = Store()
    traces, labels, name = import_labelled(
        store, args.file, by=args.by, dataset=args.dataset or "", limit=args.limit
    )
    print(
        f"imported {traces} traces and {labels} step labels by {name!r} from {args.file.name} -> {store.root}"
    )
    return 0
