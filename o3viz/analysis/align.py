"""Aligning the steps of two rounds, with a cost known before it is paid.

**Short rounds** (``n · m ≤ EXACT_CELLS`` = ``OVERVIEW_FROM``², the size estimated first) get one
exact alignment of all their steps: difflib on normalised step text, as Compare always did.

**Long rounds** are aligned by episode first (``o3viz.analysis.episodes``, cut with one shared
least length so that identical text is cut identically on both sides), then by step inside the
matched episodes:

1. Episodes longer than ``PIECE`` steps are split into pieces of at most ``PIECE`` steps.
2. The pieces of A and B are scored pairwise by the Dice similarity of their step texts (a
   multiset of normalised texts; same dominant step type adds ``TYPE_BONUS``), and aligned by a
   weighted LCS over that ``Pa × Pb`` matrix; pairs under ``MATCH_MIN`` never match.
3. Between two matched pairs, the unmatched pieces are paired in order (a replaced episode is
   compared with what replaced it); the rest stand alone.
4. Each pair of pieces is aligned step by step (difflib). The unmatched steps at its end (the
   last ``CARRY`` a side at most) are carried into the next pair, so an episode boundary that falls
   some steps apart on the two sides (after an insertion or a deletion) costs nothing.

The work is bounded: ``cells`` = ``Pa · Pb`` piece pairs scored + the sum over aligned pairs of
``len(A steps) · len(B steps)``, at most ``Pa · Pb + (Pa + Pb) · (PIECE + CARRY)²``; ``bound`` is the
tighter figure estimated once the pieces are paired, before any step is aligned. At 2,000 × 2,000
R1 steps (``python -m benchmarks compare``) that is about 95,000 cells, bound 260,000, against
3,900,000 for the exact alignment; the step work grows as ``n · PIECE`` once pieces are full. Before the first
divergence both sides are cut alike and every row is exact, so the first divergence is the exact
one whenever the text before it is the same.

>>> from o3viz.testing.synthetic import make_trace
>>> al = align_rounds(make_trace(8, seed=1).final, make_trace(8, seed=1).final)
>>> al.method, al.cells, al.similarity, {r.tag for r in al.rows}
('steps', 64, 1.0, {'equal'})
"""

from __future__ import annotations

import difflib
import math
from collections import Counter
from dataclasses import dataclass, field

from o3viz.analysis.episodes import MAX_EPISODES, MIN_STEPS, OVERVIEW_FROM, find_episodes
from o3viz.analysis.outline import build_outline
from o3viz.trace import Round, Step, Task, Trace

EXACT_CELLS = OVERVIEW_FROM**2  # 22,500: up to this, one exact alignment (as before episodes)
PIECE = 64  # steps: a longer episode is aligned in pieces of at most this many
CARRY = 32  # steps a side: unmatched steps at the end of a pair carried into the next pair
MATCH_MIN = 0.2  # Dice similarity of two pieces' step texts below which they never match
TYPE_BONUS = 0.05  # added to a match of the same dominant step type: breaks ties between equals


@dataclass
class AlignedStep:
    """One row of the step diff: ``tag`` is equal | replace | insert | delete (difflib's opcodes)."""

    tag: str
    a_index: int | None
    a_text: str
    b_index: int | None
    b_text: str


@dataclass
class Alignment:
    """The aligned rows and what they cost (see the module docstring)."""

    rows: list[AlignedStep]
    similarity: float  # 2 · equal rows / (n + m), difflib's ratio, 0..1
    method: str  # "steps" (one exact alignment) | "episodes" (episodes first, then steps)
    cells: int  # alignment-matrix cells computed
    bound: int  # the most cells it could compute, estimated before aligning any step
    min_steps: int | None = None  # the least episode length both sides were cut with (episodes)
    pairs: list[tuple[int, int]] = field(default_factory=list)  # matched (A, B) episode indices


@dataclass
class _Piece:
    episode: int
    lo: int  # positions in the round's step list
    hi: int
    dominant: str
    texts: Counter


def norm_text(text: str) -> str:
    """A step's text as Compare aligns it: lower case, whitespace runs as one space.

    >>> norm_text("  So  12 * 4   = 48.")
    'so 12 * 4 = 48.'
    """
    return " ".join(text.lower().split())


def _diff_rows(sa: list[Step], sb: list[Step]) -> tuple[list[AlignedStep], float]:
    """difflib over the two step lists' normalised texts, one row per step (replace rows paired)."""
    sm = difflib.SequenceMatcher(
        None, [norm_text(s.text) for s in sa], [norm_text(s.text) for s in sb], autojunk=False
    )
    rows: list[AlignedStep] = []
    for tag, i0, i1, j0, j1 in sm.get_opcodes():
        for k in range(max(i1 - i0, j1 - j0)):
            x = sa[i0 + k] if i0 + k < i1 else None
            y = sb[j0 + k] if j0 + k < j1 else None
            row_tag = tag if tag != "replace" else ("replace" if x and y else ("delete" if x else "insert"))
            rows.append(
                AlignedStep(
                    row_tag,
                    x.index if x else None,
                    x.text if x else "",
                    y.index if y else None,
                    y.text if y else "",
                )
            )
    return rows, sm.ratio()


def least_steps(n: int, m: int) -> int:
    """The least episode length both sides are cut with: ``find_episodes``' default for the longer."""
    return max(MIN_STEPS, math.ceil(max(n, m) / MAX_EPISODES))


def _pieces(rnd: Round, least: int) -> list[_Piece]:
    outline = build_outline(Trace(Task(""), [rnd]))
    steps = outline.rounds[0].steps
    out = []
    for ep in find_episodes(outline, least):
        k = math.ceil(ep.length / PIECE)
        cuts = [ep.lo + (ep.length * i) // k for i in range(k + 1)]
        for lo, hi in zip(cuts, cuts[1:], strict=False):
            types = Counter(s.type for s in steps[lo:hi])
            texts = Counter(norm_text(s.text) for s in rnd.steps[lo:hi])
            out.append(_Piece(ep.index, lo, hi, types.most_common(1)[0][0], texts))
    return out


def _match_pieces(pa: list[_Piece], pb: list[_Piece]) -> list[tuple[int, int]]:
    """Matched (A piece, B piece) positions, in order: a weighted LCS over their similarities."""
    where: dict[str, list[tuple[int, int]]] = {}
    for j, p in enumerate(pb):
        for text, c in p.texts.items():
            where.setdefault(text, []).append((j, c))
    score = [[0.0] * len(pb) for _ in pa]
    for i, p in enumerate(pa):
        shared = Counter()
        for text, c in p.texts.items():
            for j, cb in where.get(text, ()):
                shared[j] += min(c, cb)
        for j, s in shared.items():
            dice = 2 * s / ((pa[i].hi - pa[i].lo) + (pb[j].hi - pb[j].lo))
            if dice >= MATCH_MIN:
                score[i][j] = dice + TYPE_BONUS * (pa[i].dominant == pb[j].dominant)
    best = [[0.0] * (len(pb) + 1) for _ in range(len(pa) + 1)]
    for i in range(len(pa)):
        for j in range(len(pb)):
            diag = best[i][j] + score[i][j] if score[i][j] else -1.0
            best[i + 1][j + 1] = max(best[i][j + 1], best[i + 1][j], diag)
    pairs, i, j = [], len(pa), len(pb)
    while i and j:
        if score[i - 1][j - 1] and best[i][j] == best[i - 1][j - 1] + score[i - 1][j - 1]:
            pairs.append((i - 1, j - 1))
            i, j = i - 1, j - 1
        elif best[i][j] == best[i - 1][j]:
            i -= 1
        else:
            j -= 1
    return pairs[::-1]


def _chunks(na: int, nb: int, pairs: list[tuple[int, int]]) -> list[tuple[int | None, int | None]]:
    """Every piece once, in order: the matched pairs, and between them the unmatched paired in order."""
    out: list[tuple[int | None, int | None]] = []
    i = j = 0
    for pi, pj in [*pairs, (na, nb)]:
        ga, gb = list(range(i, pi)), list(range(j, pj))
        out += [
            (ga[k] if k < len(ga) else None, gb[k] if k < len(gb) else None)
            for k in range(max(len(ga), len(gb)))
        ]
        if pi < na and pj < nb:
            out.append((pi, pj))
        i, j = pi + 1, pj + 1
    return out


def _carry_from(sub: list[AlignedStep], start: int) -> int:
    """Where the carried suffix of ``sub`` begins: after its last equal row (``start``), the shortest
    the longest suffix of rows holding at most ``CARRY`` steps a side."""
    na = nb = 0
    for k in range(len(sub) - 1, start - 1, -1):
        na += sub[k].a_index is not None
        nb += sub[k].b_index is not None
        if na > CARRY or nb > CARRY:
            return k + 1
    return start


def _align_by_episodes(a: Round, b: Round) -> Alignment:
    least = least_steps(len(a.steps), len(b.steps))
    pa, pb = _pieces(a, least), _pieces(b, least)
    pairs = _match_pieces(pa, pb)
    chunks = _chunks(len(pa), len(pb), pairs)
    size = lambda ps, k: ps[k].hi - ps[k].lo if k is not None else 0  # noqa: E731
    bound = len(pa) * len(pb) + sum((size(pa, x) + CARRY) * (size(pb, y) + CARRY) for x, y in chunks)
    rows: list[AlignedStep] = []
    cells, carry_a, carry_b = len(pa) * len(pb), [], []
    a_at, b_at = {s.index: s for s in a.steps}, {s.index: s for s in b.steps}
    for k, (x, y) in enumerate(chunks):
        sa = carry_a + (a.steps[pa[x].lo : pa[x].hi] if x is not None else [])
        sb = carry_b + (b.steps[pb[y].lo : pb[y].hi] if y is not None else [])
        cells += len(sa) * len(sb)
        sub, _ = _diff_rows(sa, sb)
        last = max((n for n, r in enumerate(sub) if r.tag == "equal"), default=-1)
        cut = len(sub) if k + 1 == len(chunks) else _carry_from(sub, last + 1)
        rows += sub[:cut]  # the rest is aligned again with the next pair
        carry_a = [a_at[r.a_index] for r in sub[cut:] if r.a_index is not None]
        carry_b = [b_at[r.b_index] for r in sub[cut:] if r.b_index is not None]
    equal = sum(r.tag == "equal" for r in rows)
    sim = 2 * equal / (len(a.steps) + len(b.steps)) if a.steps or b.steps else 1.0
    ep_pairs = list(dict.fromkeys((pa[i].episode, pb[j].episode) for i, j in pairs))
    return Alignment(rows, sim, "episodes", cells, bound, least, ep_pairs)


def align_rounds(a: Round, b: Round) -> Alignment:
    """The steps of ``a`` and ``b`` aligned, exactly when small, by episode first when long."""
    n, m = len(a.steps), len(b.steps)
    if n * m <= EXACT_CELLS:  # the size is estimated before anything is computed
        rows, ratio = _diff_rows(a.steps, b.steps)
        return Alignment(rows, ratio, "steps", n * m, n * m)
    return _align_by_episodes(a, b)


def align_steps(a: Round, b: Round) -> tuple[list[AlignedStep], float]:
    """The aligned rows of ``align_rounds`` and their similarity (difflib's ratio when short)."""
    al = align_rounds(a, b)
    return al.rows, al.similarity


SHARED, FORK = "shared", "fork"  # row tags of a branch aligned at its fork


def align_at_fork(a: Round, b: Round, fork: int, edited: str | None) -> Alignment:
    """A branch ``b`` aligned with its parent round ``a`` at step ``fork``: the steps before it are
    the shared prefix (``shared`` rows: B continued from them, it did not write them), the edited
    step is a ``fork`` row (A's step against the edit; none for a resample), then A's later steps
    and B's continuation are aligned as usual, so the first row after the fork that is not
    ``equal`` is the first difference the fork made.

    >>> from o3viz.testing.builders import small_trace
    >>> t = small_trace()
    >>> [r.tag for r in align_at_fork(t.final, t.final, 1, "So 5.").rows][:2]
    ['shared', 'fork']
    """
    fork = max(0, min(fork, len(a.steps)))
    rows = [AlignedStep(SHARED, s.index, s.text, None, s.text) for s in a.steps[:fork]]
    rest = a.steps[fork:]
    if edited is not None and rest:
        rows.append(AlignedStep(FORK, rest[0].index, rest[0].text, None, edited))
        rest = rest[1:]
    after, ratio = _diff_rows(rest, b.steps)
    n = len(rest) * len(b.steps)
    return Alignment(rows + after, ratio, "fork", n, n)


def branch_step_offset(branch: Trace) -> int | None:
    """What to add to a branch's own step numbers to number them as in its parent: the fork step
    ``I``, plus one after an edit (the edited step is in the branch's prefix, so its first own step
    is the parent's step ``I + 1``); None for a trace that is not a branch.

    >>> from o3viz.testing.builders import small_trace
    >>> from o3viz.trace.branching import BranchParent
    >>> t = small_trace()
    >>> t.parent = BranchParent("", "0:6", "edit", edited="So 5.")
    >>> branch_step_offset(t)
    7
    """
    from o3viz.trace.ids import parse_step_ref

    p = branch.parent
    node = parse_step_ref(p.step) if p is not None else None
    if node is None:
        return None
    return node.index + (1 if p.kind == "edit" and p.edited is not None else 0)


def fork_step(parent: Trace, branch: Trace) -> int | None:
    """The step of ``parent``'s final round that ``branch`` forked at, when it is ``parent``'s
    branch there (its fork round is the final one and the step's text is the one it replaced)."""
    from o3viz.trace.ids import parse_step_ref

    p = branch.parent
    node = parse_step_ref(p.step) if p is not None else None
    if node is None or node.round != len(parent.rounds) - 1 or not parent.rounds:
        return None
    steps = parent.final.steps
    ok = node.index < len(steps) and (p.original is None or steps[node.index].text == p.original)
    return node.index if ok else None
