"""The figures of ``python -m benchmarks importance`` from per-step rows: each predictor's
Spearman ρ with a target (pooled and the per-problem median) and its partial ρ given position and
headroom, Kendall's W between the methods, and receiver-head locality, each with a 90% bootstrap
interval over problems. Prints ``name: value [low, high]`` lines and returns the figures."""

from __future__ import annotations

import statistics

import numpy as np

from o3viz.analysis.importance.agreement import agreement_of_columns
from o3viz.analysis.importance.stats import bootstrap_over_groups, partial_spearman, spearman

CONTROLS = ("position", "headroom")


def _col(rows, key) -> np.ndarray:
    return np.array([np.nan if r.get(key) is None else float(r[key]) for r in rows])


def groups_of(rows: list[dict]) -> list[list[dict]]:
    by: dict[int, list[dict]] = {}
    for r in rows:
        by.setdefault(r["problem"], []).append(r)
    return list(by.values())


def _flat(groups):
    return [r for g in groups for r in g]


def _median_rho(groups, m, target):
    per = [spearman(_col(g, m), _col(g, target)) for g in groups]
    per = [x for x in per if x is not None]
    return statistics.median(per) if per else None


def _fmt(v, ci=None) -> str:
    s = "—" if v is None else f"{v:+.3f}"
    if ci is not None and ci[0] is not None:
        s += f" [{ci[0]:+.3f}, {ci[1]:+.3f}]"
    return s


def _line(name: str, v, ci=None, extra: str = "") -> None:
    print(f"{name}: {_fmt(v, ci)}{extra}", flush=True)


def rho_figures(rows: list[dict], predictors: list[str], target: str, label: str) -> dict:
    """Pooled ρ, per-problem median ρ and partial ρ (given position and headroom) per predictor."""
    groups = groups_of(rows)
    out: dict = {}
    for m in predictors:
        pooled = spearman(_col(rows, m), _col(rows, target))
        pooled_ci = bootstrap_over_groups(
            lambda g, m=m: spearman(_col(_flat(g), m), _col(_flat(g), target)), groups
        )
        med = _median_rho(groups, m, target)
        med_ci = bootstrap_over_groups(lambda g, m=m: _median_rho(g, m, target), groups)
        n = int((np.isfinite(_col(rows, m)) & np.isfinite(_col(rows, target))).sum())
        _line(f"{label} {m} ~ {target} spearman pooled", pooled, pooled_ci, f" (n = {n} steps)")
        _line(f"{label} {m} ~ {target} spearman per-problem median", med, med_ci)
        fig = {"pooled": pooled, "pooled_ci": pooled_ci, "median": med, "median_ci": med_ci, "n": n}
        if m not in CONTROLS:

            def part(g, m=m):
                f = _flat(g)
                return partial_spearman(_col(f, m), _col(f, target), [_col(f, c) for c in CONTROLS])

            fig["partial"], fig["partial_ci"] = part(groups), bootstrap_over_groups(part, groups)
            _line(
                f"{label} {m} ~ {target} partial spearman given position, headroom",
                fig["partial"],
                fig["partial_ci"],
            )
        out[m] = fig
    return out


def agreement_figures(rows: list[dict], methods: list[str], label: str) -> dict:
    """Kendall's W (within-problem ranks pooled) and each pair's ρ, with intervals."""
    groups = groups_of(rows)

    def cols(g):
        return [{m: _col(p, m) for m in methods} for p in g]

    ag = agreement_of_columns(cols(groups))
    ci = bootstrap_over_groups(lambda g: agreement_of_columns(cols(g)).w, groups, n=200)
    per = [agreement_of_columns(cols([g])).w for g in groups]
    per = [w for w in per if w is not None]
    _line(f"{label} kendall W pooled ({', '.join(ag.sources)})", ag.w, ci, f" (n = {ag.steps} steps)")
    _line(
        f"{label} kendall W per-problem median",
        statistics.median(per) if per else None,
        None,
        f" ({len(per)} problems)",
    )
    for (a, b), v in ag.pairs.items():
        print(f"{label} rank correlation {a} ~ {b}: {_fmt(v)}", flush=True)
    return {
        "w": ag.w,
        "w_ci": ci,
        "steps": ag.steps,
        "pairs": {f"{a}~{b}": v for (a, b), v in ag.pairs.items()},
    }


def locality_figures(locality: list[list[float]], label: str) -> dict:
    """The mean locality of the receiver heads, over traces, with an interval over traces."""
    per = [float(np.mean(x)) for x in locality if x]
    if not per:
        return {}
    mean = float(np.mean(per))
    ci = bootstrap_over_groups(lambda g: float(np.mean(g)), per)
    _line(
        f"{label} receiver head locality (share of mass within one step of the diagonal)",
        mean,
        ci,
        f" ({len(per)} traces)",
    )
    return {"mean": mean, "ci": ci, "traces": len(per)}
