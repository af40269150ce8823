"""``o3viz tree NAME``: where a sample set's samples part ways. Prints the forks, largest split
first, each with the step text on its two sides, then the answer distribution (each answer clipped
to one line of ``ANSWER_CHARS``) and the majority with its interval, or the tie where answers share
the top count; ``--json`` prints one object (``nodes``: ``id``, ``parent``, ``samples``,
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


ANSWER_CHARS = 60  # an answer as printed: a longer one is clipped
ANSWERS_SHOWN = 10  # answers listed; the rest are counted


def _pct(x) -> str:
    return "—" if x is None else f"{x:.0%}"


def _clip(text: str, n: int = ANSWER_CHARS) -> str:
    """``text`` on one line, clipped to ``n`` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _counted(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _answers_line(answers: dict[str, int]) -> str:
    shown = [f"{_clip(a)} × {c}" for a, c in list(answers.items())[:ANSWERS_SHOWN]]
    more = len(answers) - ANSWERS_SHOWN
    return "answers: " + ", ".join(shown) + (f", and {_counted(more, 'other answer')}" if more > 0 else "")


def _majority_line(m: dict) -> str | None:
    if m["answer"] is None:
        return None
    if m["tied"]:
        names = ", ".join(_clip(a, 30) for a in [m["answer"], *m["tied"]][:ANSWERS_SHOWN])
        return (
            f"no majority: a {len(m['tied']) + 1}-way tie at {_counted(m['count'], 'sample')} each ({names})"
        )
    lo, hi = m["interval"]
    ok = {True: ", the reference", False: ", not the reference", None: ""}[m["correct"]]
    return f"majority: {_clip(m['answer'])} ({_pct(m['share'])}, 95% {lo:.0%} to {hi:.0%}{ok})"


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
        out.append(f"fork {rank} (node {fid}, {_counted(f.samples, 'sample')}) {where}")
        out.append(f"  reference share differs by {f.gap:.0%} (95% {lo:.0%} to {hi:.0%}){ent}")
        for label, cid in zip(("best ", "worst"), f.sides, strict=True):
            c = tree.nodes[cid]
            out.append(f"  {label} {_pct(c.reference_share)} of {c.graded}: {c.text[:120]!r}")
    out.append(_answers_line(tree.nodes[0].answers))
    majority = _majority_line(m)
    return [*out, majority] if majority else out


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
