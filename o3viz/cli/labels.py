"""``o3viz label KEY --step R:I --verdict V --by NAME`` labels one step of a stored trace;
``o3viz labels export|agreement|import`` writes a golden set, prints the agreement table (κ, α,
precision and recall against the automatic labellers) and reads a golden set's labels back in."""

from __future__ import annotations

import argparse
from pathlib import Path

from o3viz.errors import UsageError, printable
from o3viz.store.labels import VERDICTS


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("label", help="label one step of a stored trace (correct / wrong / unsure)")
    p.add_argument("key", help="the trace's key in the store (`o3viz library list` shows them)")
    p.add_argument("--step", required=True, help="the step as R:I (round R, step I), e.g. 0:3")
    p.add_argument("--verdict", required=True, help=f"one of {', '.join(VERDICTS)}")
    p.add_argument("--first-error", action="store_true", help="the first error of the reasoning is here")
    p.add_argument("--type", help="the step's type, where the classifier got it wrong")
    p.add_argument("--note", default="", help="a note on the step")
    p.add_argument("--by", required=True, help="the labeller's name (at most 100 characters)")
    p.set_defaults(func=run_label)

    p = sub.add_parser("labels", help="golden sets: export labelled steps, agreement, import labels")
    cmds = p.add_subparsers(dest="labels_command", metavar="ACTION", required=True, parser_class=type(p))
    e = cmds.add_parser("export", help="write the labelled steps of a dataset as a golden set")
    e.add_argument("--dataset", help="the dataset (default: every labelled trace)")
    e.add_argument("--format", choices=("jsonl", "parquet"), default="jsonl")
    e.add_argument("--out", type=Path, required=True, help="the file to write")
    e.add_argument("--agreed", action="store_true", help="only steps that two labellers agreed on")
    e.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    e.set_defaults(func=run_export)
    a = cmds.add_parser("agreement", help="print the agreement table of a dataset's labels")
    a.add_argument("--dataset", help="the dataset (default: every labelled trace)")
    a.add_argument("--disagreements", type=int, default=5, help="disagreeing steps listed per pair")
    a.set_defaults(func=run_agreement)
    i = cmds.add_parser("import", help="add the labels of a golden-set JSONL file (labels export)")
    i.add_argument("file", type=Path)
    i.add_argument("--by", required=True, help="the labeller these labels are filed under")
    i.set_defaults(func=run_import)


def run_label(args: argparse.Namespace) -> int:
    from o3viz.cli._trace_arg import resolve_key
    from o3viz.store.labels import Label, add_labels, parse_step
    from o3viz.store.store import Store

    rnd, step = parse_step(args.step)
    store = Store()
    try:  # a prefix, or a replaced key (its successor, said so)
        key = resolve_key(store, args.key)
    except UsageError:
        key = args.key  # the label's own check names what is missing
    label = Label(key, rnd, step, args.by, args.verdict, args.first_error, args.type, args.note)
    add_labels(store, [label])
    print(f"labelled step {label.step_id} of {key} {args.verdict} (by {label.labeller})")
    return 0


def run_export(args: argparse.Namespace) -> int:
    from o3viz.store.golden import export_labels
    from o3viz.store.store import Store

    traces, labels = export_labels(
        Store(), args.dataset, args.out, args.format, agreed=args.agreed, overwrite=args.overwrite
    )
    print(f"wrote {labels} labels on {traces} traces to {args.out}")
    return 0


def run_agreement(args: argparse.Namespace) -> int:
    from o3viz.store.golden import dataset_agreement
    from o3viz.store.store import Store

    table = dataset_agreement(Store(), args.dataset)
    print(format_table(table, args.disagreements))
    return 0


def format_table(table, disagreements: int = 5) -> str:
    """The agreement table as text: one line per pair, then α, type accuracy and disagreements."""
    rows = [{k: printable(str(v)) for k, v in r.items()} for r in table.rows()]  # names from files
    head = ("labellers", "n", "κ [95% CI]", "precision", "recall")
    widths = [max(len(str(r[h])) for r in [dict(zip(head, head, strict=True)), *rows]) for h in head]
    lines = [
        "  ".join(str(r[h]).ljust(w) for h, w in zip(head, widths, strict=True))
        for r in [dict(zip(head, head, strict=True)), *rows]
    ]
    if table.alpha is not None:
        lines.append(
            f"Krippendorff's α over {len(table.people)} labellers: {table.alpha.text()} (n = {table.alpha.n} steps)"
        )
    for name, est in table.types:
        lines.append(printable(f"{name}: type accuracy {est.text()} (n = {est.n})"))
    for p in table.pairs:
        for key, step, a, b in p.disagree[:disagreements]:
            lines.append(printable(f"  disagree: {key} step {step}: {p.a} says {a}, {p.b} says {b}"))
    return "\n".join(lines)


def run_import(args: argparse.Namespace) -> int:
    from o3viz.store.golden import import_label_file
    from o3viz.store.store import Store

    n = import_label_file(Store(), args.file, args.by)
    print(f"added {n} labels from {args.file} as {args.by}")
    return 0
