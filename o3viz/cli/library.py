"""``o3viz library list|search|show|rm|export|reindex|columnar``: the persistent trace store from the
command line (the same store the app's Library and Dataset pages show)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from o3viz.errors import UsageError, printable

LIST_COLUMNS = ("key", "dataset", "name", "model", "steps", "tokens", "correct", "verdict", "claim_errors")


def _file_name(text: str) -> Path:
    if not text.strip():
        raise argparse.ArgumentTypeError("needs a file name")
    return Path(text)


def _filters(p: argparse.ArgumentParser, *, page: bool = True) -> None:
    p.add_argument("--dataset", action="append", default=[], help="only this dataset (repeatable)")
    p.add_argument("--model", action="append", default=[], help="only this model (repeatable)")
    p.add_argument("--source", action="append", default=[], choices=("run", "sample", "upload", "import"))
    p.add_argument("--verdict", action="append", default=[], help="final verdict: pass, fail, unverifiable")
    p.add_argument("--correct", choices=("any", "correct", "wrong", "ungraded"), default="any")
    p.add_argument("--step-type", action="append", default=[], help="has a step of this Thought Anchors type")
    if page:
        p.add_argument("--sort", default="id", help="column to sort by (default: newest first)")
        p.add_argument("--asc", action="store_true", help="ascending order")
        p.add_argument("--limit", type=int, default=20, help="rows to print (default 20, at most 1000)")
        p.add_argument("--offset", type=int, default=0, help="rows to skip")
        p.add_argument("--json", action="store_true", help="one JSON object per line")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "library",
        help="the persistent trace store: list, search, show, remove, export, reindex, columnar",
        description="The trace store (O3VIZ_HOME, else $XDG_DATA_HOME/o3viz, else "
        "~/.local/share/o3viz): trace files named by content hash and an SQLite index over them.",
    )
    cmds = p.add_subparsers(dest="library_command", metavar="ACTION", parser_class=type(p))
    ls = cmds.add_parser("list", help="list traces, newest first, with filters")
    _filters(ls)
    se = cmds.add_parser("search", help="full-text search over the step text")
    se.add_argument("text", help='words that must all appear ("word*" matches a prefix)')
    _filters(se)
    sh = cmds.add_parser("show", help="one trace's index row")
    sh.add_argument("key", help="a trace key (or a unique prefix of at least 4 characters)")
    sh.add_argument("--json", action="store_true")
    rm = cmds.add_parser("rm", help="remove traces (file and row)")
    rm.add_argument("keys", nargs="*", help="trace keys (or unique prefixes)")
    rm.add_argument("--dataset", help="remove every trace of this dataset")
    rm.add_argument("--yes", action="store_true", help="needed with --dataset")
    ex = cmds.add_parser("export", help="a step-level table (one row per step) for pandas, DuckDB, Spark")
    ex.add_argument(
        "--parquet", type=_file_name, required=True, help="output .parquet file (a folder with --partition)"
    )
    ex.add_argument(
        "--partition",
        choices=("dataset",),
        help="write the store's Parquet layout instead: traces/ and steps/ folders, one dataset=NAME/ each",
    )
    ex.add_argument("--overwrite", action="store_true", help="replace --parquet if it is a file that exists")
    ex.add_argument("--search", default="", help="only traces whose steps contain these words")
    _filters(ex, page=False)
    ri = cmds.add_parser("reindex", help="rebuild the index from the trace files")
    ri.add_argument("--full", action="store_true", help="recompute every row, not only missing ones")
    cmds.add_parser("columnar", help="rewrite the columnar copy (Parquet) the Dataset page's aggregates read")
    p.set_defaults(func=run)


def _query(args: argparse.Namespace, search: str = ""):
    from o3viz.store.query import Query

    return Query(
        search=search,
        dataset=args.dataset,
        model=args.model,
        source=args.source,
        verdict=args.verdict,
        correct=args.correct,
        step_types=args.step_type,
        sort=getattr(args, "sort", "id"),
        descending=not getattr(args, "asc", False),
        limit=getattr(args, "limit", 20),
        offset=getattr(args, "offset", 0),
    )


def _check_names(store, datasets: list[str], models: list[str]) -> None:
    """A dataset or model the store does not hold is one line naming the ones it does (for a model,
    those of the datasets named), not an empty table and exit 0."""
    from o3viz.store.query import Query

    def known(values) -> str:
        values = sorted(set(values))
        more = f", … ({len(values)} in all)" if len(values) > 10 else ""
        return ", ".join(values[:10]) + more if values else "none yet"

    have = {v for v, _ in store.distinct("dataset")}
    for name in datasets:
        if name and name not in have:  # "" is the traces of no dataset
            from o3viz.store.dataset_names import dataset_names

            raise UsageError(f"no dataset {name!r} in the store (datasets: {dataset_names(store)})")
    if models:
        scope = store.select(Query(dataset=datasets), ("model",)) if datasets else None
        have = {r[0] for r in scope} if scope is not None else {v for v, _ in store.distinct("model")}
        where = f"dataset {', '.join(datasets)}" if datasets else "the store"
        for name in models:
            if name and name not in have:
                raise UsageError(f"no model {name!r} in {where} (models: {known(have)})")


def _print_rows(store, q, as_json: bool) -> None:
    total = store.count(q)
    rows = store.rows(q)
    if as_json:
        for r in rows:
            print(json.dumps(r, ensure_ascii=False))
        return
    print("  ".join(f"{c:<{_w(c)}}" for c in LIST_COLUMNS))
    for r in rows:
        cells = {**r, "correct": {1: "yes", 0: "no"}.get(r["correct"], "—")}
        if not r["tokens"]:  # 0 is the index's "unknown" (an import that gave no count)
            cells["tokens"] = None
        print("  ".join(f"{_cell(cells[c], _w(c)):<{_w(c)}}" for c in LIST_COLUMNS))
    shown = f"{q.offset + 1}–{q.offset + len(rows)}" if rows else "none"
    print(f"{shown} of {total} traces in {store.root}")


def _w(col: str) -> int:
    return {"key": 16, "dataset": 14, "name": 30, "model": 22}.get(col, 7)


def _cell(v, width: int) -> str:
    s = "—" if v is None or v == "" else printable(" ".join(str(v).split()))  # names come from files
    return s if len(s) <= width else s[: width - 1] + "…"


def _resolve(store, prefix: str) -> str:
    from o3viz.cli._trace_arg import resolve_key

    return resolve_key(store, prefix)


def run(args: argparse.Namespace) -> int:
    from o3viz.store.repair import reindex
    from o3viz.store.store import Store

    store = Store()
    cmd = args.library_command
    if cmd is None:
        raise UsageError("library needs an action: list, search, show, rm, export, reindex or columnar")
    if cmd in ("list", "search"):
        _check_names(store, args.dataset, args.model)
        _print_rows(store, _query(args, args.text if cmd == "search" else ""), args.json)
    elif cmd == "show":
        row = store.row(_resolve(store, args.key))
        if args.json:
            print(json.dumps(row, ensure_ascii=False))
        else:
            for k, v in row.items():
                print(f"{k:>26}  {'—' if v is None or v == '' else printable(str(v))}")
            print(f"{'file':>26}  {store.path(row['key'])}")
    elif cmd == "rm":
        return _rm(store, args)
    elif cmd == "export":
        from o3viz.store.export import export_layout, export_steps

        if args.partition:
            traces, steps, errors = export_layout(store, _query(args, args.search), args.parquet)
        else:
            traces, steps, errors = export_steps(
                store, _query(args, args.search), args.parquet, overwrite=args.overwrite
            )
        for e in errors:
            sys.stderr.write(f"skipped {e}\n")
        print(f"wrote {steps} steps of {traces} traces to {args.parquet}")
    elif cmd == "reindex":
        rep = reindex(store, full=args.full)
        for e in rep.errors:
            sys.stderr.write(f"unreadable: {e}\n")
        if rep.replaces:
            print(f"finished {rep.replaces} replace(s) that a stopped process left halfway")
        print(f"reindexed {store.root}: {rep.added} rows added, {rep.removed} removed, {rep.kept} kept")
    if cmd in ("reindex", "columnar"):
        from o3viz.store.columnar import refresh

        n = refresh(store)
        print(f"columnar copy of {store.root}: {n} traces (the Dataset page reads it through DuckDB)")
    return 0


def _rm(store, args: argparse.Namespace) -> int:
    from o3viz.store.query import Query

    keys = [_resolve(store, k) for k in args.keys]
    if args.dataset:
        if not args.yes:
            raise UsageError(f"removing dataset {args.dataset!r} needs --yes")
        keys += [r[0] for r in store.select(Query(dataset=[args.dataset]), ("key",))]
    if not keys:
        raise UsageError("rm needs trace keys or --dataset NAME --yes")
    print(f"removed {store.delete(keys)} traces from {store.root}")
    return 0
