"""``o3viz answers TRACE|KEY|--dataset NAME``: the running answer of a trace, the answer each step
states (no model) and, with ``--probe``, the answer a model gives when forced to answer at the
step boundaries (every step, or every K-th then refined around the first correct point and each
flip). Saved into the trace (a file in place; a store key or a dataset through
``o3viz.store.replace``, keeping labels and branch links). Resumable: a trace that already holds
the probe's record made with the same settings (probe, model, endpoint, suffix, max_new_tokens,
--every) is skipped, one made with other settings is redone, and a stopped run loses nothing
stored. A trace the probe failed on (a request that failed, a reply it could not read) is stored
untouched and counted as failed; the run then exits 1, and a rerun redoes exactly those.
``--json`` prints one object per trace (JSON Lines); progress goes to stderr.

Examples:
  o3viz answers run.o3trace.json
  o3viz answers 34f40467 --json
  o3viz answers --dataset math500 --probe local --every 4
  o3viz answers --dataset math500 --probe endpoint --base-url http://127.0.0.1:8000/v1 --model m
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from o3viz.cli._trace_arg import TRACE_HELP
from o3viz.errors import UsageError


def register(subparsers) -> None:
    from o3viz.answers.probes import PROBES  # the registry only: a probe's model loads when built

    p = subparsers.add_parser(
        "answers",
        help="the running answer of a trace: stated answers per step, and forced ones with --probe",
        description=__doc__.split("\n\n", 1)[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Examples:"
        + __doc__.split("Examples:", 1)[1]
        + "\n--suffix, --base-url and --model are short for -V suffix=, -V base_url= and the probe's model"
        + " option.\nProbes (--list):\n"
        + PROBES.describe(),
    )
    p.add_argument("trace", nargs="?", type=Path, help=f"{TRACE_HELP} (or give --dataset)")
    p.add_argument("--dataset", help="every trace of this stored dataset, in place")
    p.add_argument("--probe", choices=("none", *PROBES.names()), default="none", help="forced answers (none)")
    p.add_argument("--list", action="store_true", help="list the probes with their options and exit")
    p.add_argument("--every", type=int, default=1, help="probe every K-th step boundary, then refine (1)")
    p.add_argument("--suffix", help="the answer-forcing suffix (default: the probe's, for the chat template)")
    p.add_argument("--base-url", help="endpoint: an OpenAI-compatible address ending in /v1")
    p.add_argument("--model", help="local: the model to load (default: the embedded one); endpoint: its name")
    p.add_argument("-V", dest="options", action="append", metavar="KEY=VALUE", help="a probe option")
    p.add_argument(
        "--redo", action="store_true", help="probe again where a record of the same settings is held"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object per trace (JSON Lines)")
    p.set_defaults(func=run)


def request_of(args: argparse.Namespace):
    from o3viz.answers.run import AnswersRequest
    from o3viz.plugins import parse_pairs

    req = AnswersRequest(
        probe=args.probe, every=args.every, suffix=args.suffix, base_url=args.base_url,
        model=args.model, options=parse_pairs(args.options), redo=args.redo,
    )  # fmt: skip
    req.validate()
    return req


def run(args: argparse.Namespace) -> int:
    if args.list:
        from o3viz.answers.probes import PROBES

        print(PROBES.describe())
        return 0
    if (args.trace is None) == (args.dataset is None):
        raise UsageError("give a TRACE file or key, or --dataset NAME (one of them)")
    req = request_of(args)
    if args.dataset:
        return _run_dataset(args, req)
    return _run_one(args, req)


def _print_line(trace, key: str | None, args: argparse.Namespace) -> None:
    from o3viz.analysis.answer_figures import trace_answer_figures
    from o3viz.answers.run import answers_json

    if args.json:
        print(json.dumps(answers_json(key, trace), ensure_ascii=False))
        return
    f = trace_answer_figures(trace)
    frac = f"{f.first_correct_fraction:.0%}" if f.first_correct_fraction is not None else "—"
    print(
        f"{key or 'trace'}: first correct {f.first_correct_step or 'never'} ({frac} of the {f.unit}), "
        f"converged at {f.convergence_step or '—'}, flips {f.flips_right_to_wrong} right→wrong and "
        f"{f.flips_wrong_to_right} wrong→right, overthinking {f.overthinking}, final "
        + {True: "right", False: "wrong", None: "ungraded"}[f.final_correct]
    )


def _run_one(args: argparse.Namespace, req) -> int:
    from o3viz.answers.run import add_answers, holds_answers
    from o3viz.cli._trace_arg import open_trace
    from o3viz.store.replace import replace_trace
    from o3viz.store.store import Store

    store = Store()
    src = open_trace(args.trace, store)
    trace = src.trace
    probe = req.make_probe()
    key = src.key
    if not req.redo and holds_answers(trace, probe, req.every):
        print(f"{src.name}: already holds these answers; nothing to do", file=sys.stderr)
    elif add_answers(trace, probe, req.every, redo=req.redo):
        if src.key is not None:  # a store key: the stored trace, in place
            key = replace_trace(store, src.key, trace)
            print(f"saved in the store as {key}", file=sys.stderr)
        else:
            print(f"saved in {trace.save(args.trace, overwrite=True)}", file=sys.stderr)
    _print_line(trace, key, args)
    return 0


def _run_dataset(args: argparse.Namespace, req) -> int:
    from o3viz.answers.dataset import run_dataset
    from o3viz.store.store import Store

    store = Store()
    step = 1

    def progress(done: int, total: int, key: str, what: str) -> None:
        nonlocal step
        step = max(1, total // 100)
        if what == "failed" or done % step == 0 or done == total:
            print(f"[{done}/{total}] {key} {what}", file=sys.stderr, flush=True)

    report = run_dataset(store, args.dataset, req, progress)
    for line in report.failed:
        print(f"failed {line}", file=sys.stderr)
    if args.json:
        for key in report.keys:
            _print_line(store.trace(key), key, args)
    print(report.summary(), file=sys.stderr)
    return 130 if report.stopped else 1 if report.failed else 0
