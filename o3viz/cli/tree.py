"""``o3viz tree NAME``: where a sample set's samples part ways. Prints the forks, largest split
first, each with the step text on its two sides, then the answer distribution and the majority
with its interval; ``--json`` prints one object (``nodes``: ``id``, ``parent``, ``samples``,
``answers``, ``reference_share``, ``fork``, …; ``majority``: the answer and its share)."""

from __future__ import annotations

import argparse
import json

from o3viz.errors import UsageError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tree", help="where a sample set's samples part ways (forks, answers)")
    p.add_argument("name", help="the sample set (o3viz sample --list shows them)")
    p.add_argument("--json", action="store_true", help="print the tree as one JSON object")
    p.add_argument("--top", type=int, default=5, help="forks listed (5)")
    p.set_defaults(func=run)


def _pct(x) -> str:
    return "—" if x is None else f"{x:.0%}"


def _lines(tree, top: int) -> list[str]:
    from o3viz.samples.view_data import tree_view_data

    data = tree_view_data(tree)
    m = data["majority"]
    out = [f"{data['n']} samples; reference: {data['reference'] or 'none'}"]
    if not tree.forks:
        out.append("no fork: no two branches of 2+ graded samples differ in reaching the reference")
    for rank, fid in enumerate(tree.forks[:top], 1):
        f = tree.nodes[fid]
        lo, hi = f.gap_interval
        ent = f", entropy {f.entropy:.2f} nats" if f.entropy is not None else ""
        where = (
            "at the question" if f.parent is None else f"after step {f.depth + f.steps - 1}: {f.last[:100]!r}"
        )
        out.append(f"fork {rank} (node {fid}, {f.samples} samples) {where}")
        out.append(f"  reference share differs by {f.gap:.0%} (95% {lo:.0%} to {hi:.0%}){ent}")
        for label, cid in zip(("best ", "worst"), f.sides, strict=True):
            c = tree.nodes[cid]
            out.append(f"  {label} {_pct(c.reference_share)} of {c.graded}: {c.text[:120]!r}")
    out.append("answers: " + ", ".join(f"{a} × {c}" for a, c in tree.nodes[0].answers.items()))
    if m["answer"] is not None:
        lo, hi = m["interval"]
        ok = {True: ", the reference", False: ", not the reference", None: ""}[m["correct"]]
        out.append(f"majority: {m['answer']} ({_pct(m['share'])}, 95% {lo:.0%} to {hi:.0%}{ok})")
    return out


def run(args: argparse.Namespace) -> int:
    from o3viz.samples.sets import read_set
    from o3viz.samples.tree import build_tree
    from o3viz.store.store import Store

    if not 1 <= args.top <= 100:
        raise UsageError(f"--top {args.top}: give 1 to 100")
    s = read_set(Store(), args.name)
    tree = build_tree(s.traces)
    if args.json:
        print(json.dumps({"set": s.name, "stopped": s.stopped, **tree.to_json()}, ensure_ascii=False))
        return 0
    print(f"set {s.name}" + (" (a stopped draw: a smaller set)" if s.stopped else ""))
    for line in _lines(tree, args.top):
        print(line)
    return 0
