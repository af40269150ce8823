"""Verifiers' verdicts in the view's data, each verifier named once. The data holds one table of
the verifiers (``verifiers``: ``{"verifier", "kind"}`` each, in the order first met) and each
step's details hold only references into it (``verdicts``: ``[index, verdict, score]`` per
verifier that has a verdict list for the step's round); the view's script (``static/view.js``)
turns them into rows of the step's checks, as ``verifier_rows`` does here. Repeating the names
per step made a page of 32 verifiers with 200-character names over 10,000 steps 220 MiB.

>>> from o3viz.trace import Round, Step, Task, Trace
>>> from o3viz.trace.verdicts import VerdictRecord
>>> rnd = Round(text="a. b.", steps=[Step(0, "a.", 0, 2), Step(1, "b.", 3, 5)])
>>> rnd.verdicts.append(VerdictRecord("prm", ["ok", None], [0.914, None], info={"kind": "prm"}))
>>> table = verifier_table(Trace(Task("q"), [rnd]))
>>> table, step_refs(rnd, 0, table), step_refs(rnd, 1, table)
([{'verifier': 'prm', 'kind': 'prm'}], [[0, 'ok', 0.91]], [[0, None, None]])
"""

from __future__ import annotations

from o3viz.figures import VERDICT_COLORS
from o3viz.trace import Round, Trace

NOT_JUDGED = "not judged"  # a step the verifier said nothing about
# a verifier's word -> the colour of the check verdict it stands for (grey: not judged)
VERIFIER_COLORS = {
    "ok": VERDICT_COLORS["pass"],
    "wrong": VERDICT_COLORS["fail"],
    "unsure": VERDICT_COLORS["unverifiable"],
    NOT_JUDGED: "#9ca3af",
}


def _key(rec) -> tuple[str, str]:
    return rec.verifier, str(rec.info.get("kind", ""))


def verifier_table(*traces: Trace) -> list[dict]:
    """Every verifier with verdicts in ``traces``, named once, in the order first met (round by
    round): the table the steps' ``verdicts`` refer to by index."""
    seen: dict[tuple[str, str], None] = {}
    for trace in traces:
        for rnd in trace.rounds:
            for rec in rnd.verdicts:
                seen.setdefault(_key(rec), None)
    return [{"verifier": v, "kind": k} for v, k in seen]


def round_refs(rnd: Round, table: list[dict]) -> list[int]:
    """Each of ``rnd``'s verdict records' index in ``table`` (one not in it is appended)."""
    at = {(r["verifier"], r["kind"]): i for i, r in enumerate(table)}
    out = []
    for rec in rnd.verdicts:
        if _key(rec) not in at:
            at[_key(rec)] = len(table)
            table.append({"verifier": rec.verifier, "kind": _key(rec)[1]})
        out.append(at[_key(rec)])
    return out


def step_refs(rnd: Round, k: int, table: list[dict], refs: list[int] | None = None) -> list[list]:
    """Every verifier's verdict on ``rnd.steps[k]``: ``[index in table, verdict or None (not
    judged), score rounded to 2 places or None]``. ``refs``: ``round_refs(rnd, table)``, computed
    once per round by a caller that walks its steps."""
    refs = round_refs(rnd, table) if refs is None else refs
    out = []
    for i, rec in zip(refs, rnd.verdicts, strict=True):
        if 0 <= k < len(rec.verdicts):
            score = rec.scores[k] if k < len(rec.scores) else None
            out.append([i, rec.verdicts[k], None if score is None else round(score, 2)])
    return out


def verifier_rows(data: dict, node: str) -> list[dict]:
    """The rows the view's script adds to node ``node``'s checks from its ``verdicts`` (in
    ``data``, a view's data): each verifier's name (and kind), its verdict (``not judged`` where it
    said nothing), its score and colour."""
    rows = []
    for i, verdict, score in data["nodes"][node].get("verdicts", []):
        v = data["verifiers"][i]
        word = verdict or NOT_JUDGED
        rows.append(
            {
                "name": v["verifier"] + (f" · {v['kind']}" if v["kind"] else ""),
                "verdict": word,
                "message": f"score {score:.2f}" if score is not None else "",
                "color": VERIFIER_COLORS.get(word, VERIFIER_COLORS[NOT_JUDGED]),
                "verifier": v["verifier"],
            }
        )
    return rows
