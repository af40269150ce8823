"""``o3viz sample``: N samples of one question stored as a sample set (``o3viz.samples``).

- ``--prompt TEXT`` or ``--task gsm8k:3`` with ``--n N --temperature T``: the local model prefills
  the prompt once and decodes the N samples as one batch; with ``--base-url URL --model NAME``, N
  requests to an OpenAI-compatible endpoint, ``--concurrency`` at a time. Progress goes to stderr;
  Ctrl-C stops and keeps the finished samples as a smaller set, and says so; so does an endpoint
  request that fails after its retries (then the exit code is 1).
- ``--grow``: N more samples of an existing set (``--set NAME``), with its own settings.
- ``--firm-up K``: K continuations after each side of every split the set's tree could not decide
  (``o3viz.samples.resample.firm_up``), added to the set; then the forks before and after.
- ``--group-dataset NAME``: one set per question a stored dataset asks several times.
- ``--texts FILE ... --question Q``: plain-text replies to one question as a set.
- ``--list``: the sets in the store.

Every number is checked before any model loads (``SampleRequest.validate``).
"""

from __future__ import annotations

import argparse
import signal
import sys
from contextlib import contextmanager
from pathlib import Path

from o3viz.errors import UsageError
from o3viz.samples.request import (
    MAX_CONCURRENCY,
    MAX_SAMPLES,
    SampleRequest,
    check_room,
    check_set_name,
    new_set_name,
)
from o3viz.samples.resample import MAX_FIRM_NODES, MAX_RESAMPLE


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sample", help="N samples of one question as a sample set (o3viz tree draws it)")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--prompt", help="the prompt text")
    src.add_argument("--task", help="a built-in task, e.g. gsm8k:3 (its reference grades the samples)")
    src.add_argument("--grow", action="store_true", help="add --n samples to the set named by --set")
    src.add_argument(
        "--firm-up",
        type=int,
        metavar="K",
        help=f"K continuations (1 to {MAX_RESAMPLE}) after each side of every undecided split of the "
        "set named by --set, with the local model; the tree is tested again on them",
    )
    src.add_argument(
        "--group-dataset", metavar="NAME", help="one set per question stored dataset NAME repeats"
    )
    src.add_argument("--texts", nargs="+", type=Path, metavar="FILE", help="plain-text replies to --question")
    src.add_argument("--list", action="store_true", help="list the sample sets in the store")
    d = SampleRequest()  # every default is the request's, as the Samples page's form reads them
    p.add_argument("--n", type=int, default=d.n, help=f"samples, 2 to {MAX_SAMPLES} ({d.n})")
    p.add_argument("--temperature", type=float, default=d.temperature, help=f"above 0 ({d.temperature})")
    p.add_argument("--top-p", type=float, default=d.top_p)
    p.add_argument(
        "--max-new-tokens",
        type=int,
        default=d.max_new_tokens,
        help=f"new tokens per sample ({d.max_new_tokens})",
    )
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument("--set", dest="set_name", help="the set's name (made up and printed when not given)")
    p.add_argument(
        "--model", help="with --base-url: the endpoint's model; else a local model (default: embedded)"
    )
    p.add_argument("--base-url", help="an OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")
    p.add_argument(
        "--concurrency",
        type=int,
        default=d.concurrency,
        help=f"endpoint requests in flight, 1 to {MAX_CONCURRENCY}",
    )
    p.add_argument("--batch", type=int, default=d.batch, help=f"local samples decoded together ({d.batch})")
    p.add_argument(
        "--request-timeout", type=float, default=d.request_timeout, help="seconds per endpoint request"
    )
    p.add_argument("--question", help="with --texts: the question they answer")
    p.add_argument(
        "--reference",
        help="with --prompt or --texts: the reference answer that grades the samples (without one a "
        "tree has no forks: it can't tell which way leads to the right answer)",
    )
    p.add_argument(
        "--splits",
        type=int,
        default=8,
        help=f"with --firm-up: most splits firmed up, 1 to {MAX_FIRM_NODES} (8)",
    )
    p.add_argument("--min-n", type=int, default=2, help="with --group-dataset: least traces per question (2)")
    p.add_argument("--limit", type=int, default=200, help="with --group-dataset: most sets made (200)")
    p.set_defaults(func=run)


def request_from_args(args: argparse.Namespace) -> SampleRequest:
    from o3viz.clients.post import check_timeout  # the one check of every timeout flag

    req = SampleRequest(
        prompt=args.prompt, task_id=args.task, reference=args.reference if args.prompt or args.task else None,
        n=args.n, temperature=args.temperature, top_p=args.top_p,
        max_new_tokens=args.max_new_tokens, seed=args.seed, set_name=args.set_name, model=args.model,
        base_url=args.base_url, concurrency=args.concurrency, batch=args.batch,
        request_timeout=check_timeout(args.request_timeout, "--request-timeout"),
    )  # fmt: skip
    req.validate()
    return req


@contextmanager
def _ctrl_c():
    """The first Ctrl-C asks the job to stop (it keeps what is finished); a second one interrupts."""
    flag = {"stop": False}

    def handler(signum, frame):  # noqa: ARG001 - signal handler signature
        if flag["stop"]:
            raise KeyboardInterrupt
        flag["stop"] = True
        print("\nstopping: keeping the samples already finished (Ctrl-C again to abandon)", file=sys.stderr)

    old = signal.signal(signal.SIGINT, handler)
    try:
        yield lambda: flag["stop"]
    finally:
        signal.signal(signal.SIGINT, old)


def _progress(req: SampleRequest):
    def show(done: int, tokens: int, n: int) -> None:
        where = f", token {tokens}/{req.max_new_tokens}" if tokens else ""
        print(f"\rsampling: {done}/{n} samples finished{where}   ", end="", file=sys.stderr, flush=True)

    return show


def _draw(req: SampleRequest):
    from o3viz.samples.draw import draw_endpoint, draw_local, endpoint_backend

    with _ctrl_c() as stop:
        if req.base_url:
            drawn = draw_endpoint(endpoint_backend(req), req, on_progress=_progress(req), should_stop=stop)
        else:
            from o3viz.model import load_model

            model, tokenizer = load_model(req.model)
            drawn = draw_local(model, tokenizer, req, on_progress=_progress(req), should_stop=stop)
    print(file=sys.stderr)
    return drawn


def _grow_settings(args, store) -> None:
    """``--grow``: the set's own prompt or task, reference, temperature, budget and endpoint go
    into ``args``, and a new seed; refused in one line when the set has no room for ``--n``."""
    from o3viz.samples.sets import read_set

    if not args.set_name:
        raise UsageError("--grow needs --set NAME, the set to add samples to")
    have = read_set(store, check_set_name(args.set_name))
    check_room(have.name, have.n, args.n)  # before drawing: a set over its cap keeps none
    info = have.info
    if not (info.get("prompt") or info.get("task_id")):
        raise UsageError(f"set {args.set_name} was not drawn from a prompt or task; it cannot grow")
    if args.reference is not None:
        raise UsageError("--reference does not go with --grow: a set keeps the reference it was drawn with")
    args.prompt, args.task = info.get("prompt"), info.get("task_id")
    if args.prompt:  # a free prompt's reference is the set's (a task brings its own)
        args.reference = have.traces[0].task.reference
    args.temperature = float(info.get("temperature") or args.temperature)
    args.max_new_tokens = int(info.get("max_new_tokens") or args.max_new_tokens)
    args.seed = int(info.get("seed") or 0) + 1 + have.n  # a new stream: the grown samples differ
    args.base_url = info.get("base_url") or args.base_url


def _sample(args, store) -> int:
    """Draw, then store what finished. A stop or a failed request keeps the finished samples and
    says how many; a failed request also makes the exit code 1."""
    from o3viz.samples.draw import draw_settings
    from o3viz.samples.sets import grow_set, save_set

    if args.grow:
        _grow_settings(args, store)
    req = request_from_args(args)
    name = req.set_name or new_set_name()
    if not args.grow:
        from o3viz.store.query import Query

        if store.count(Query(dataset=[name]), cap=1):
            raise UsageError(f"set {name}: the store already has a dataset of that name; pick another --set")
    drawn = _draw(req)
    kept, failed, why = len(drawn.traces), int(bool(drawn.error)), "stopped"
    if drawn.error:
        print(f"error: {drawn.error}", file=sys.stderr)
        why = "a request failed"
    if drawn.stopped:
        print(f"{why}: kept {kept} finished sample(s) of {req.n} asked for", file=sys.stderr)
    if args.grow:
        ended = {"stopped": True, **({"error": drawn.error} if drawn.error else {})}
        s = grow_set(store, name, drawn.traces, ended if drawn.stopped else {})
        print(f"set {name}: {kept} sample(s) added, {s.n} in all")
        return failed
    if kept < 2:
        print(f"nothing stored: {kept} sample(s) finished, and a set needs 2", file=sys.stderr)
        return 1
    s = save_set(store, name, drawn.traces, draw_settings(req, drawn))
    made_up = "" if req.set_name else " (a made-up name: give --set NAME to choose one)"
    smaller = f", a smaller set than the {req.n} asked for ({why})" if drawn.stopped else ""
    print(f"set {s.name}: {s.n} samples stored{smaller}{made_up}; draw it with: o3viz tree {s.name}")
    return failed


def _firm_up(args, store) -> int:
    from o3viz.clients import Sampling
    from o3viz.samples.resample import firm_up, undecided
    from o3viz.samples.sets import grow_set, read_set
    from o3viz.samples.tree import build_tree

    if not args.set_name:
        raise UsageError("--firm-up needs --set NAME, the set whose undecided splits get more samples")
    if not 1 <= args.firm_up <= MAX_RESAMPLE:
        raise UsageError(f"--firm-up {args.firm_up}: give 1 to {MAX_RESAMPLE} continuations a side")
    if not 1 <= args.splits <= MAX_FIRM_NODES:
        raise UsageError(f"--splits {args.splits}: give 1 to {MAX_FIRM_NODES}")
    s = read_set(store, check_set_name(args.set_name))
    tree = build_tree(s.traces)
    todo = undecided(tree)[: args.splits]
    if not todo:
        print(
            f"set {s.name}: no undecided split (no node with two sides of 2+ graded samples that is not a fork)"
        )
        return 0
    check_room(s.name, s.n, 2 * len(todo) * args.firm_up)  # before the model loads
    from o3viz.branch.continuation import Continuer
    from o3viz.model import load_model

    info = s.info
    sampling = Sampling(
        int(info.get("max_new_tokens") or args.max_new_tokens),
        float(info.get("temperature") or args.temperature),
        args.top_p,
        int(info.get("seed") or 0) + 5000 + s.n,  # a new stream per set size
    )
    model, tokenizer = load_model(args.model)

    def show(done: int, total: int) -> None:
        print(f"\rfirming up: {done}/{total} continuations", end="", file=sys.stderr, flush=True)

    with _ctrl_c() as stop:
        new = firm_up(
            s, tree, args.firm_up, Continuer(model=model, tokenizer=tokenizer), sampling,
            limit=args.splits, on_progress=show, should_stop=stop,
        )  # fmt: skip
    print(file=sys.stderr)
    if not new:
        print(f"set {s.name}: stopped before a continuation finished; the set is unchanged")
        return 0
    grown = grow_set(store, s.name, new, {"stopped": True} if stop() else {})
    after = build_tree(grown.traces)
    print(
        f"set {s.name}: {len(new)} continuations added after the sides of {len(todo)} undecided "
        f"split(s), {grown.n} samples in all; forks {len(tree.forks)} before, {len(after.forks)} now; "
        f"draw it with: o3viz tree {s.name}"
    )
    return 0


def run(args: argparse.Namespace) -> int:
    from o3viz.store.store import Store

    store = Store()
    if args.list:
        from o3viz.samples.sets import list_sets

        for s in list_sets(store):
            print(f"{s.name}\t{s.n} samples\t{s.question[:70]}")
        return 0
    if args.group_dataset:
        from o3viz.samples.group import sets_from_dataset

        made = sets_from_dataset(
            store, args.group_dataset, prefix=args.set_name, min_n=args.min_n, limit=args.limit
        )
        for s in made:
            print(f"set {s.name}: {s.n} traces of one question")
        print(f"{len(made)} set(s) made from dataset {args.group_dataset}")
        return 0
    if args.firm_up is not None:
        return _firm_up(args, store)
    if args.texts:
        from o3viz.samples.group import import_texts_as_set

        name = check_set_name(args.set_name) if args.set_name else new_set_name()
        s = import_texts_as_set(
            store, args.texts, name, question=args.question or "", reference=args.reference
        )
        print(f"set {s.name}: {s.n} texts of one question stored; draw it with: o3viz tree {s.name}")
        return 0
    return _sample(args, store)
