"""``o3viz run --tasks SOURCE --limit N --pair-a A --pair-b B``: one task list run under two
settings (``o3viz.run.paired_run``) into two datasets of the library, with a progress bar; Ctrl-C
stops after the current generation and keeps the finished pairs. Each side runs one round (the
model's first reply; ``--rounds`` above 1 is refused). At the end it prints why pairs went ungraded,
if any did, and the paired table of ``o3viz compare --dataset A --dataset B``."""

from __future__ import annotations

import argparse
import shlex
import signal
import sys
import threading

from o3viz.errors import UsageError, parse_option

PAIR_ONLY = ("limit", "start", "pair_a", "pair_b", "dataset")


def add_paired_arguments(p: argparse.ArgumentParser, src) -> None:
    """``--tasks`` joins the prompt sources (``src``); the rest is a group of its own."""
    from o3viz.run.paired_run import TASK_SOURCES

    src.add_argument(
        "--tasks",
        choices=TASK_SOURCES,
        help="a task list run under two settings (--pair-a, --pair-b) into two paired datasets",
    )
    g = p.add_argument_group("paired run (with --tasks: one task list, two settings, two datasets)")
    g.add_argument("--limit", type=int, help="how many tasks of the list (required with --tasks)")
    g.add_argument("--start", type=int, default=0, help="the first task's 0-based position (default 0)")
    g.add_argument(
        "--pair-a",
        metavar="SETTING",
        default="",
        help="side A's settings, e.g. daa=off (default), model=PATH or steer=question,alpha=0.05",
    )
    g.add_argument(
        "--pair-b", metavar="SETTING", default="", help="side B's settings, e.g. daa=allocate,strength=2"
    )
    g.add_argument(
        "--dataset",
        metavar="NAME",
        default="",
        help="the datasets' common name: they become 'NAME · A: …' and 'NAME · B: …' "
        "(default: the task list, e.g. gsm8k:0…19); a rerun with the same settings resumes them, "
        "one with other settings (--max-new-tokens, --model, ...) needs a new NAME; each side runs one "
        "round, so --rounds above 1 is refused",
    )


def request_from(args: argparse.Namespace, request_from_args):
    """The options as a validated ``PairedRunRequest`` (one ``UsageError`` line on bad input);
    ``request_from_args`` (``o3viz.cli.run``'s) makes the settings both sides share."""
    from o3viz.run.paired_run import PairedRunRequest, parse_setting, task_ids

    if args.out is not None:
        raise UsageError("--out: a paired run's traces go to the library (o3viz export writes files)")
    if args.limit is None:
        raise UsageError("--tasks needs --limit N (how many tasks of the list)")
    if args.daa != "off" or args.steer or args.steer_segment:
        raise UsageError(
            "--tasks: give DAA and steering per side, e.g. --pair-a daa=off --pair-b daa=allocate"
        )
    if not (args.pair_a or args.pair_b):
        raise UsageError("--tasks: give --pair-b (and --pair-a, default daa=off), e.g. --pair-b daa=allocate")
    ids = task_ids(args.tasks, args.limit, args.start)
    shared = request_from_args(argparse.Namespace(**{**vars(args), "task": ids[0]}))
    a = parse_option(parse_setting, "--pair-a", args.pair_a)
    b = parse_option(parse_setting, "--pair-b", args.pair_b)
    return PairedRunRequest(shared, ids, a, b, args.dataset.strip()).validate()


def check_single(args: argparse.Namespace) -> None:
    """Paired-run options without ``--tasks`` are a mistake, said in one line."""
    given = [f"--{n.replace('_', '-')}" for n in PAIR_ONLY if getattr(args, n, None) not in (None, "", 0)]
    if given:
        raise UsageError(f"{', '.join(given)}: only with --tasks (a paired run)")


def run_paired(args: argparse.Namespace, request_from_args) -> int:
    from tqdm import tqdm

    from o3viz.analysis.paired import PairedCompareRequest, Side
    from o3viz.app.paired_run import StoreSink
    from o3viz.cli.compare import format_result
    from o3viz.model import load_model
    from o3viz.run.paired_run import run_pairs
    from o3viz.store.paired import compare_datasets
    from o3viz.store.store import Store

    req = request_from(args, request_from_args)
    store = Store()
    stop = threading.Event()
    bar = tqdm(total=2 * len(req.tasks), unit="run", file=sys.stderr, dynamic_ncols=True)

    def progress(done: int, total: int, label: str) -> None:
        bar.n = done
        bar.set_description_str(label[:70], refresh=True)

    def on_int(signum, frame) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
        bar.write("stopping after the current generation (Ctrl-C again to quit now)…", file=sys.stderr)

    old = (
        signal.signal(signal.SIGINT, on_int)
        if threading.current_thread() is threading.main_thread()
        else None
    )
    try:
        res = run_pairs(
            req,
            lambda name: load_model(name),
            StoreSink(store),
            on_progress=progress,
            should_stop=stop.is_set,
        )
    finally:
        bar.close()
        if old is not None:
            signal.signal(signal.SIGINT, old)
    print(res.summary())
    for line in res.failed:
        print(f"failed: {line}")
    if not res.pairs:
        return 1
    da, db = res.datasets
    result = compare_datasets(store, PairedCompareRequest(Side(da), Side(db)))
    print("\n".join(["", *format_result(result)]))
    note = res.grading_note()  # after the table: why its pairs went ungraded, and what n would do
    if note:
        print(f"\nnote: {note}")
    print(
        f"\nagain: o3viz compare --dataset {shlex.quote(da)} --dataset {shlex.quote(db)} (or Compare → Two datasets)"
    )
    return 0
