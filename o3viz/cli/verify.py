"""``o3viz verify TRACE --verifier NAME``: add a verifier's step verdicts to a trace file or a
stored trace (a store key: in place, through ``o3viz.store.replace``; or to ``--out``), or to every
trace of a dataset (``--dataset NAME``). Other verifiers' verdicts stay beside the new ones. A
round that already holds the verifier's verdicts is skipped (``--redo`` replaces them), so an
interrupted dataset run picks up where it stopped.

A verifier's options are given as ``-V key=value`` (repeatable); ``--list`` prints every verifier
with its options, and this help ends with the same generated text. ``--model`` and ``--base-url``
are aliases of ``-V model=`` and ``-V base_url=`` (the names ``o3viz branch`` and ``importance``
use), for any verifier that has that option.

Examples:
  o3viz verify run.o3trace.json --verifier claims
  o3viz verify 34f40467 --verifier claims
  o3viz verify run.o3trace.json --verifier prm -V model=Qwen/Qwen2.5-Math-PRM-7B -V trust_remote_code=true
  o3viz verify run.o3trace.json --verifier prm -V model=./my-prm -V threshold=0.4 -V device=cpu
  o3viz verify --dataset gsm8k-labels --verifier judge --base-url http://127.0.0.1:8000/v1 --model m
  o3viz verify --list
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from o3viz.cli._trace_arg import TRACE_HELP
from o3viz.errors import O3vizError, UsageError

MAX_TRACES = 100_000


ALIASES = ("model", "base_url")  # --model and --base-url: -V model= and -V base_url=


def register(subparsers) -> None:
    from o3viz.verify.verifiers import VERIFIERS

    p = subparsers.add_parser(
        "verify",
        help=f"add a verifier's step verdicts ({', '.join(VERIFIERS.names())}) to a trace",
        description=__doc__.split("Examples:", 1)[0].strip(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Examples:"
        + __doc__.split("Examples:", 1)[1]
        + "\nVerifiers (--list):\n"
        + VERIFIERS.describe(),
    )
    p.add_argument("trace", nargs="?", type=Path, help=f"{TRACE_HELP} (or give --dataset)")
    p.add_argument("--verifier", default="claims", help="which verifier (--list names them)")
    p.add_argument(
        "-V",
        dest="options",
        action="append",
        metavar="KEY=VALUE",
        help="an option of the verifier (repeatable; --list shows each verifier's)",
    )
    for name in ALIASES:
        p.add_argument(f"--{name.replace('_', '-')}", help=f"the same as -V {name}=VALUE")
    p.add_argument("--list", action="store_true", help="list the verifiers with their options and exit")
    p.add_argument("--dataset", help="judge every trace of this stored dataset, in place")
    p.add_argument("--out", type=Path, help="write here instead of replacing TRACE")
    p.add_argument("--redo", action="store_true", help="replace the verifier's earlier verdicts")
    p.set_defaults(func=run)


def options_of(args: argparse.Namespace) -> dict[str, str]:
    """The verifier's options as given: every ``-V key=value`` and the ``--model``/``--base-url``
    aliases (one option given both ways is refused)."""
    from o3viz.plugins import parse_pairs

    given = parse_pairs(args.options)
    for name in ALIASES:
        value = getattr(args, name)
        if value is None:
            continue
        if name in given:
            raise UsageError(f"--{name.replace('_', '-')} and -V {name}= give the same option: give one")
        given[name] = value
    return given


def run(args: argparse.Namespace) -> int:
    from o3viz.verify.verifiers import VERIFIERS

    if args.list:
        print(VERIFIERS.describe())
        return 0
    if (args.trace is None) == (args.dataset is None):
        raise UsageError("give a TRACE file or --dataset NAME (one of them)")
    verifier = VERIFIERS.make(args.verifier, options_of(args))
    if args.dataset:
        return _run_dataset(args, verifier)
    return _run_one(args, verifier)


def _run_one(args: argparse.Namespace, verifier) -> int:
    from o3viz.cli._trace_arg import open_trace
    from o3viz.store.replace import replace_trace
    from o3viz.store.store import Store
    from o3viz.verify.verifiers import add_verdicts

    store = Store()
    src = open_trace(args.trace, store)
    trace = src.trace
    judged = add_verdicts(trace, verifier, redo=args.redo)
    if src.key is not None and args.out is None:  # a store key: the stored trace, in place
        new = replace_trace(store, src.key, trace)
        where = f"the store as {new}" if new != src.key else f"the store as {new} (unchanged)"
    else:
        out = args.out or args.trace
        same = src.path is not None and out.resolve() == src.path.resolve()
        where = str(trace.save(out, overwrite=args.out is None or same))
    print(f"{verifier.name}: {judged} round(s) judged, {_summary(trace, verifier.name)}; saved in {where}")
    return 0


def _summary(trace, name: str) -> str:
    recs = [v for r in trace.rounds for v in r.verdicts if v.verifier == name]
    counts = {k: sum(v == k for rec in recs for v in rec.verdicts) for k in ("ok", "wrong", "unsure")}
    return ", ".join(f"{n} {k}" for k, n in counts.items())


def _run_dataset(args: argparse.Namespace, verifier) -> int:
    from o3viz.store.query import Query
    from o3viz.store.replace import branch_parents, replace_trace
    from o3viz.store.store import Store
    from o3viz.verify.verifiers import add_verdicts

    if args.out is not None:
        raise UsageError("--dataset judges the stored traces in place: give no --out")
    store = Store()
    keys = [r[0] for r in store.select(Query(dataset=[args.dataset]), ("key",), max_rows=MAX_TRACES)]
    if not keys:
        raise UsageError(f"no traces in dataset {args.dataset!r} (`o3viz library list` shows the datasets)")
    branches = branch_parents(store)
    changed = same = skipped = failed = 0
    for key in keys:
        try:
            trace = store.editable_trace(key)  # changed below: never the process's shared copy
            if not add_verdicts(trace, verifier, redo=args.redo):
                skipped += 1
                continue
            if replace_trace(store, key, trace, branches=branches) == key:
                same += 1  # --redo gave the verdicts it had
            else:
                changed += 1
        except O3vizError as exc:  # one bad trace does not stop the run: it is named and left
            failed += 1
            print(f"failed {key}: {exc}", file=sys.stderr)
    print(
        f"{verifier.name}: {changed + same} trace(s) of {args.dataset!r} judged"
        + (f" ({same} unchanged)" if same else "")
        + f", {skipped} already judged by {verifier.name}"
        + (f", {failed} failed" if failed else "")
        + (f"; saved in {store.root}" if changed else "; nothing to save")
    )
    return 0
