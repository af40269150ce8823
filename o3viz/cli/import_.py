"""``python -m o3viz import FILE [--out F]``: import a reasoning trace another model produced
(DeepSeek-R1 ``<think>`` text, OpenAI / Anthropic / DeepSeek API JSON, JSON/JSONL datasets, plain
thinking text, Inspect AI ``.eval``/``.json`` logs, Parquet datasets) as an o3viz trace, optionally
enriched with a local model's attention. The trace enters the trace store (``--out`` also writes a
file; ``--no-store`` keeps it out of the store); ``--all --dataset NAME`` imports every record of a
JSONL file or JSON array (every sample of an Inspect log, every row of a Parquet file) into the
store, in parallel worker processes. ``--preview`` prints how the first records parse and stores
nothing. An import that adds nothing and recognises nothing is an error (exit 2). ``--list``
prints the formats (the registry's generated text); the ``--*-field`` flags are generated from
``ImportFields``."""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
import time
from pathlib import Path

from o3viz.cli.run import check_out
from o3viz.errors import UsageError
from o3viz.run.config import parse_layers


def register(sub: argparse._SubParsersAction) -> None:
    from o3viz.importers import ImportFields
    from o3viz.importers.registry import FORMATS
    from o3viz.plugins import options_of

    p = sub.add_parser(
        "import",
        help="import an external reasoning trace (R1, OpenAI, Anthropic, datasets)",
        description=textwrap.fill(
            "Import a reasoning trace produced elsewhere: detect its format, split and type "
            "its steps, build the reasoning map, check its arithmetic and final answer, and save it "
            "as a trace file. --enrich teacher-forces it through a local model for attention.",
            88,
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Formats (--list):\n" + FORMATS.describe(),
    )
    p.add_argument(
        "file",
        type=Path,
        nargs="?",
        help="the trace to import (text, JSON, JSONL, an Inspect AI .eval/.json log, Parquet; .gz accepted)",
    )
    p.add_argument("--list", action="store_true", help="list the formats and exit")
    p.add_argument(
        "--format", choices=FORMATS.names(), help="skip detection and read the file as this format"
    )
    p.add_argument(
        "--record",
        type=int,
        help="which record of a JSON/JSONL/Parquet dataset or Inspect log, counted from 1 as --preview "
        "and the Library count (default 1)",
    )
    p.add_argument("--reference", help="the correct final answer, to check the imported answer against")
    p.add_argument("--question", help="the question, when the file does not hold it")
    for o in options_of(ImportFields, "import fields"):
        p.add_argument(f"--{o.name.replace('_', '-')}", help=f"{o.help} (a dotted path)")
    p.add_argument(
        "--preview",
        action="store_true",
        help="print how the first records parse with these field options (which field is the text, "
        "question, reference, id, model; the answer read and its grade), and store nothing",
    )
    p.add_argument("--no-claims", action="store_true", help="skip the arithmetic claim checks")
    p.add_argument("--enrich", action="store_true", help="teacher-force through a local model for attention")
    p.add_argument("--model", help="model for --enrich (default: the embedded SmolLM2-135M-Instruct)")
    p.add_argument(
        "--layers",
        default="none",
        help="layers whose per-head rows --enrich keeps: none (default), auto, all, or e.g. 0,15,29",
    )
    p.add_argument(
        "--window",
        type=int,
        help="--enrich: tokens the model sees at once (default: its context; a longer text goes in "
        "overlapping windows; a larger value reads it whole, positions extrapolated)",
    )
    p.add_argument(
        "--out",
        type=Path,
        help="also write the trace to this file (.o3trace.json[.gz]); it enters the store as well "
        "unless --no-store",
    )
    p.add_argument(
        "--no-store", action="store_true", help="with --out: write the file only, not into the store"
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
        help="a step-labelled dataset (MR-GSM8K, PRM800K, ProcessBench): store its traces and labels as "
        "a named labeller (with --grade-field: the field holding the source's grade)",
    )
    p.add_argument("--by", help="the labeller name for --labels (default: the dataset's annotators)")
    p.add_argument("--limit", type=int, help="with --labels: at most this many traces")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from o3viz.importers import ImportFields, import_trace
    from o3viz.importers.registry import FORMATS
    from o3viz.importers.source_steps import steps_note

    if args.list:
        print(FORMATS.describe())
        return 0
    if args.file is None:
        raise UsageError("give the FILE to import (--list names the formats)")
    if args.labels:
        return _run_labels(args)
    if args.preview:
        return _run_preview(args)
    if args.all:
        return _run_all(args)
    if args.no_store and args.out is None:
        raise UsageError("--no-store keeps the trace out of the store; say where to write it with --out")
    if args.out is not None:
        check_out(args.out, args.overwrite)
    layers = parse_layers(args.layers)
    options = {"window": args.window} if args.window else {}
    trace = import_trace(
        args.file,
        format=args.format,
        record=_record_index(args.record),
        reference=args.reference,
        question=args.question,
        fields=ImportFields.of(args),
        claims=not args.no_claims,
        enrich=args.enrich,
        model=args.model,
        layers=layers,
        **options,
    )
    places = []
    if args.out is not None:
        places.append(str(trace.save(args.out, overwrite=args.overwrite)))
    if not args.no_store:
        from o3viz.store.store import Store

        store = Store()
        key = store.add(trace, source="import", dataset=args.dataset or "", name=args.file.name)
        places.append(f"the store as {key} ({store.root})")
    path = " and ".join(places)
    rnd, src = trace.final, trace.provenance.source
    claims = [c for c in rnd.checks if c.kind == "claim"]
    wrong = sum(c.verdict == "wrong" for c in claims)
    answer = next((c for c in rnd.checks if c.kind == "answer"), None)
    note = steps_note(trace.info.get("source_steps"))
    print(
        f"imported {src.get('format')} from {src.get('file', args.file.name)}"
        f"{'' if src.get('record') is None else ' record ' + str(src['record'])}: {len(rnd.steps)} steps"
        f"{f' ({note})' if note else ''}, "
        f"answer {rnd.answer!r} ({answer.verdict if answer else 'unverifiable'}), {len(claims)} claims "
        f"({wrong} wrong){', enriched' if rnd.attention is not None else ''} -> {path}"
    )
    return 0


def _record_index(number: int | None) -> int | None:
    """``--record N`` (from 1) as the importers' 0-based index."""
    if number is not None and number < 1:
        raise UsageError(
            f"--record {number}: records count from 1 (the first is --record 1, as --preview shows)"
        )
    return None if number is None else number - 1


def _run_all(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from o3viz.importers.parallel import import_dataset
    from o3viz.store.store import Store

    for flag in ("out", "record", "enrich", "format", "reference", "question"):
        if getattr(args, flag) not in (None, False):
            raise UsageError(f"--all imports into the store, one trace per record; drop --{flag}")
    store = Store()
    store.count()  # a store that cannot be opened fails here, before any worker starts
    opts = _options(args)
    bar = tqdm(total=0, unit="record", file=sys.stderr, disable=None)

    def progress(done: int, total: int, report) -> None:
        bar.total = total
        bar.n = done
        bar.set_postfix(traces=report.traces, bad=len(report.errors), refresh=False)
        bar.refresh()

    report = import_dataset(args.file, store, opts, workers=args.workers, progress=progress)
    bar.close()
    report.errors = [e.replace("(input): ", "") for e in report.errors]
    if report.traces == 0 and report.duplicates == 0 and not report.stopped:
        first = f"; first problem: {report.errors[0]}" if report.errors else ""
        sys.stderr.write(
            f"o3viz: error: imported nothing from {args.file.name}: {report.records} records read, "
            f"{len(report.errors)} skipped{first} (try o3viz import --preview, and --text-field)\n"
        )
        return 2
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


def _options(args: argparse.Namespace):
    from o3viz.importers import ImportFields
    from o3viz.importers.bulk import ImportOptions

    dataset = args.dataset or args.file.name.split(".")[0]
    return ImportOptions(dataset, not args.no_claims, **ImportFields.of(args).as_dict())


def _run_preview(args: argparse.Namespace) -> int:
    """``--preview``: the first records as the import would read them; exit 2 when none would."""
    from o3viz.importers.preview import preview_import

    pv = preview_import(args.file, _options(args))
    print(f"{args.file.name}: fields {', '.join(pv.fields) or '(none)'}")
    for r in pv.records:
        where = f"record {r.record}" + (f" {r.part}" if r.part else "")
        if r.error:
            print(f"  {where}: skipped: {r.error}")
            continue
        used = ", ".join(f"{k}={v}" for k, v in r.used.items())
        print(
            f"  {where}: {used or 'fields by format'}; {r.steps} steps, answer {r.answer!r}, "
            f"reference {r.reference_answer if r.reference_answer is not None else '(text, ungraded)'!s}"
            f" -> {r.grade}"
        )
    print(pv.summary())
    return 0 if pv.readable else 2


def _run_labels(args: argparse.Namespace) -> int:
    from o3viz.importers import ImportFields
    from o3viz.importers.process_labels import LabelOptions
    from o3viz.store.golden import import_labelled
    from o3viz.store.store import Store

    for flag in ("out", "record", "enrich", "format", "reference", "question", "all"):
        if getattr(args, flag) not in (None, False):
            raise UsageError(f"--labels imports a labelled dataset into the store; drop --{flag}")
    named = [k for k in ImportFields.of(args).given() if k != "grade_field"]
    if named:
        raise UsageError(f"--labels reads the dataset's own fields; drop --{named[0].replace('_', '-')}")
    store, opts = Store(), LabelOptions(grade_field=args.grade_field)
    t0 = time.perf_counter()
    traces, labels, name = import_labelled(
        store, args.file, by=args.by, dataset=args.dataset or "", limit=args.limit, options=opts
    )
    steps = opts.steps.text()
    print(
        f"imported {traces} traces and {labels} step labels by {name!r} from {args.file.name}"
        f"{f' ({steps})' if steps else ''} in {time.perf_counter() - t0:.1f} s -> {store.root}"
    )
    return 0
