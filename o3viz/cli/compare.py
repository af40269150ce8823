"""``o3viz compare --dataset A --dataset B``: two runs of the store compared question by question
(paired): accuracy of each, the difference with its 95% interval, the 2×2 table, McNemar's exact p
and the paired change in every reasoning measure. ``--model`` twice narrows each side to one model
(two systems of one dataset); ``--json`` writes the result, ``--parquet`` the paired rows."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from o3viz.errors import UsageError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compare",
        help="compare two datasets question by question (paired accuracy, McNemar, reasoning)",
        description="Pair two datasets of the store by question (the source's record where both "
        "sides are the same records of one file, else the question text with spacing, case and "
        "trailing punctuation folded) and print what changed from A to B: accuracy "
        "of each, the paired difference with its 95% interval, the 2x2 table, McNemar's exact p, "
        "and the paired difference of steps, backtracks, self-checks, first wrong step, step types "
        "and tokens. Unpaired questions are counted and listed.",
    )
    p.add_argument("--dataset", action="append", required=True, help="a dataset, given twice: A then B")
    p.add_argument("--model", action="append", help="narrow A (first) and B (second) to one model; twice")
    p.add_argument(
        "--grade",
        choices=("auto", "either", "source", "check", "check_first"),
        default="auto",
        help="graded by: auto (default: check_first where o3viz's check and the source's grade disagree "
        "on more than 2%% of the paired answers, else either), either (the source's grade where it has "
        "one, else o3viz's answer check), check_first (o3viz's check where it has one, else the "
        "source's), the source, or o3viz's check",
    )
    p.add_argument(
        "--key",
        choices=("auto", "record", "question"),
        default="auto",
        help="pairing key: record (the same records of one file, e.g. two systems of one import; "
        "refused otherwise), question, or auto (record where that holds, default)",
    )
    p.add_argument("--json", type=Path, help="write the result as JSON to this file")
    p.add_argument("--parquet", type=Path, help="write the paired rows (one per question) as Parquet")
    p.add_argument("--overwrite", action="store_true", help="replace --json / --parquet if they exist")
    p.set_defaults(func=run)


def request_from(args: argparse.Namespace):
    from o3viz.analysis.paired import PairedCompareRequest, Side

    datasets, models = args.dataset, args.model or []
    if len(datasets) != 2:
        raise UsageError(f"--dataset: give it twice (A then B), got {len(datasets)}")
    if len(models) not in (0, 2):
        raise UsageError("--model: give it twice (A's then B's; '' for a whole dataset), or not at all")
    models = models or ["", ""]
    sides = [Side(d, m) for d, m in zip(datasets, models, strict=True)]
    return PairedCompareRequest(sides[0], sides[1], grade=args.grade, key_by=args.key).validate()


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{v:.1%}"


def _num(v) -> str:
    return "—" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:+.3g}"


def format_result(r) -> list[str]:
    """The result as lines of text: the headline, the table, the grades (and where another would
    reverse the direction), the measures with their n and thin rows marked, unpaired."""
    from o3viz.analysis.paired_measures import THIN_RULE

    t, p, a, b = r.table, r.pairing, r.request.a.label, r.request.b.label
    out = [
        f"A = {a} ({r.n_a:,} traces)   B = {b} ({r.n_b:,} traces)",
        f"paired by {p.key_by}: {r.n:,} questions; unpaired {p.n_unpaired_a:,} in A, {p.n_unpaired_b:,} in B"
        + (
            f"; repeats left out {p.repeats_a:,} in A, {p.repeats_b:,} in B"
            if p.repeats_a or p.repeats_b
            else ""
        ),
        "",
        f"{'':14}{'B right':>10}{'B wrong':>10}",
        f"{'A right':14}{t.both:>10,}{t.a_only:>10,}",
        f"{'A wrong':14}{t.b_only:>10,}{t.neither:>10,}",
        "",
        f"accuracy A {_pct(r.acc_a)}, B {_pct(r.acc_b)} (n = {r.graded:,} graded pairs, grade: {r.request.grade})",
    ]
    if r.diff is not None:
        d, lo, hi = r.diff
        out.append(
            f"B − A {100 * d:+.1f} points (95% CI {100 * lo:+.1f} to {100 * hi:+.1f}), "
            f"McNemar exact p = {r.p_mcnemar:.3g}"
        )
    small = r.too_small()
    out += [r.headline()] + ([small] if small and small != r.headline() else [])
    for g in r.grade_table()[1:]:
        out.append(
            f"under {g['name']}: A {_pct(g['accuracy_a'])}, B {_pct(g['accuracy_b'])} "
            f"(n = {g['graded']:,}; McNemar p = {g['mcnemar_p']:.3g})"
            + ("  <- reverses the direction" if g["reverses"] else "")
        )
    out += [f"grades: {line}" for line in r.grade_lines()]
    out += [f"warning: {line}" for line in r.reversals()]
    if disagree := r.grade_disagreements():
        out.append(disagree)
    if same := r.same_answer_flips:
        out.append(
            f"{same:,} of {r.table.discordant:,} flips give the same answer on both sides: "
            "the grade differs, not the answer (they stay in the table)"
        )
    out += [
        "",
        f"{'measure (B − A per question)':44}{'n':>6}{'events':>8}{'A':>10}{'B':>10}{'B − A':>10}  95% CI",
    ]
    for m in r.measures.itertuples():
        events = "—" if math.isnan(m.events) else f"{m.events:,.0f}"
        out.append(
            f"{m.what[:44]:44}{m.n:>6,}{events:>8}{m.mean_a:>10.3g}{m.mean_b:>10.3g}{_num(m.diff):>10}  "
            f"{_num(m.lo)} to {_num(m.hi)}" + (f"  ({m.thin})" if m.thin else "")
        )
    if r.measures["thin"].astype(bool).any():
        out.append(f"({THIN_RULE}: read those rows as hints)")
    for side, names, n in (("A", p.unpaired_a, p.n_unpaired_a), ("B", p.unpaired_b, p.n_unpaired_b)):
        if n:
            out.append(f"only in {side} ({n:,}): " + "; ".join(names[:5]) + (" …" if n > 5 else ""))
    return out


def run(args: argparse.Namespace) -> int:
    from o3viz.store.paired import compare_datasets, paired_parquet
    from o3viz.store.store import Store
    from o3viz.trace.files import check_output, write_atomic

    req = request_from(args)
    for path in (args.json, args.parquet):
        if path is not None:
            check_output(path, args.overwrite)  # before the work: a bad path fails at once
    result = compare_datasets(Store(), req)
    print("\n".join(format_result(result)))
    if args.json is not None:
        doc = json.dumps(result.to_dict(), ensure_ascii=False, indent=1).encode("utf-8")
        write_atomic(args.json, doc, overwrite=args.overwrite)
        print(f"wrote {args.json}")
    if args.parquet is not None:
        paired_parquet(result, args.parquet, overwrite=args.overwrite)
        print(f"wrote {result.n:,} paired rows to {args.parquet}")
    return 0
