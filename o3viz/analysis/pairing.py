"""How two runs' rows are matched question by question: the pairing key (``question_key``: the
question with only spacing, case, end punctuation and forms of one character folded; operators,
comparison signs, superscripts and subscripts kept; ``question_hash``: that key of the WHOLE
question as a fixed-size digest, which the store's index keeps beside its clipped question text, so
two questions that share a long preamble never pair), record pairing where both sides are provably
the same records of one file (``record_mismatches``, ``choose_key``), and the match itself
(``pair_frames``: one merged row per paired question; unpaired questions and repeats counted and
listed, never silently dropped). ``o3viz.analysis.paired`` compares what it pairs.
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from o3viz.errors import UsageError

if TYPE_CHECKING:  # pandas loads with the first frame: the store's index imports question_hash
    import pandas as pd

__all__ = [
    "MAX_LISTED",
    "Pairing",
    "choose_key",
    "pair_frames",
    "question_hash",
    "question_key",
    "question_keys",
    "record_mismatches",
]

MAX_LISTED = 200  # unpaired / repeated questions listed by name (all are counted)


@dataclass
class Pairing:
    """The matched rows (``rows``: one per question, ``_a``/``_b`` suffixed columns) and what
    did not match."""

    rows: pd.DataFrame
    key_by: str  # record | question
    unpaired_a: list[str] = field(default_factory=list)  # trace names, at most MAX_LISTED
    unpaired_b: list[str] = field(default_factory=list)
    n_unpaired_a: int = 0
    n_unpaired_b: int = 0
    repeats_a: int = 0  # further traces of an already-seen question (not paired)
    repeats_b: int = 0


# Unicode compatibility forms that change what a question asks: NFKC would read "3²" as "32", "x₁"
# as "x1" and "½" as "1⁄2". Other compatibility forms (full-width digits, ligatures, no-break
# spaces, mathematical letters) are the same question written otherwise and are folded.
_KEEP_FORMS = ("<super>", "<sub>", "<fraction>", "<circle>")
# typographic marks that say the same as their ASCII forms (a curly apostrophe, a minus sign)
_SAME_MARKS = str.maketrans(
    {"’": "'", "‘": "'", "“": '"', "”": '"', "−": "-", "–": "-", "‐": "-"}
    # invisible marks (zero-width space, joiners, word joiner, BOM, soft hyphen) write nothing
    | dict.fromkeys(["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"])
)
_SPACE_BY_MARK = re.compile(r" (?=[^\w ])|(?<=[^\w ]) ")  # "7 + 3" and "7+3" are one question
_END_MARKS = " .?,:;…。？"  # end punctuation carries no meaning
_FACTORIAL_AFTER = "0123456789)]}!！"  # a "!" after these is a factorial, not an exclamation


@functools.lru_cache(maxsize=4096)
def _fold_char(c: str) -> str:
    if unicodedata.decomposition(c).startswith(_KEEP_FORMS):
        return c
    return unicodedata.normalize("NFKC", c)


def question_key(text: str | None) -> str:
    """The question as a pairing key: spacing and case folded, trailing punctuation dropped, the
    same marks written alike; every operator, comparison, digit form and inner mark kept, so two
    questions that ask different things never share a key.

    >>> question_key("Janet’s  ducks lay 16 eggs.") == question_key("janet's ducks lay 16 eggs")
    True
    >>> question_key("What is 7 + 3?"), question_key("What is 7 - 3?"), question_key("3²"), question_key("5!")
    ('what is 7+3', 'what is 7-3', '3²', '5!')
    """
    t = text or ""
    if not t.isascii():
        t = unicodedata.normalize("NFC", t)
        if not unicodedata.is_normalized("NFKC", t):
            t = "".join(c if c.isascii() else _fold_char(c) for c in t)
        t = t.translate(_SAME_MARKS)
    t = " ".join(t.casefold().split())  # whitespace runs are single spaces from here
    t = _SPACE_BY_MARK.sub("", t)
    end = len(t)
    while end and (
        t[end - 1] in _END_MARKS or (t[end - 1] in "!！" and end > 1 and t[end - 2] not in _FACTORIAL_AFTER)
    ):
        end -= 1
    return t[:end]


def question_hash(text: str | None) -> str:
    """The ``question_key`` of the whole question as 32 hex digits ("" for no question): what the
    store's index keeps (``question_key`` column) and what pairing and grouping compare, so a key
    never depends on how much of the question a column kept.

    >>> preamble = "Answer in LaTeX, boxed. " * 20
    >>> question_hash(preamble + "What is 7+3?") == question_hash(preamble + "What is 7-3?")
    False
    >>> question_hash("What is 7 + 3?") == question_hash("what is 7+3"), question_hash("")
    (True, '')
    """
    key = question_key(text)
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32] if key else ""


def question_keys(df: pd.DataFrame) -> pd.Series:
    """Each row's whole-question key: the index's ``question_key`` column where the row has one,
    else ``question_hash`` of its ``question`` (a row indexed before the column; whole wherever
    the frame's questions are)."""
    if "question_key" not in df.columns:
        return df["question"].map(question_hash)
    keys = df["question_key"].astype(object)
    missing = keys.isna()
    if missing.any():
        keys = keys.copy()
        keys[missing] = df.loc[missing, "question"].map(question_hash)
    return keys.astype(str)


def _keyed(df: pd.DataFrame, key_by: str) -> tuple[pd.DataFrame, int]:
    """``df`` with a ``pair_id`` (what pairs: the record, or the whole question's hash) and a
    ``pair_key`` to show (the record, or the question's key as far as the row holds its text); the
    first trace of each id kept, and how many repeats dropped."""
    import pandas as pd

    df = df.copy()
    if key_by == "record":
        df["pair_id"] = df["record"].map(lambda r: "" if pd.isna(r) else f"record {int(r)}")
        df["pair_key"] = df["pair_id"]
    else:
        df["pair_id"] = question_keys(df)
        df["pair_key"] = df["question"].map(question_key)
    df = df[df["pair_id"] != ""]
    kept = df.drop_duplicates("pair_id", keep="first")
    return kept, len(df) - len(kept)


def record_mismatches(a: pd.DataFrame, b: pd.DataFrame) -> int | None:
    """At the records both sides hold, how many are not provably the same source record: the same
    record bytes under the same import options (``line_hash``, as ``o3viz.importers`` stores it) and
    the same question. None when a row has no record or no record is on both sides.

    Two files imported into one dataset have records 1, 2, ... each; only the hash tells line 1 of
    one from line 1 of the other. One file's record fanned out into systems (GSM8K's four
    solutions) gives every system the same hash.
    """
    if not (len(a) and len(b)) or a["record"].isna().any() or b["record"].isna().any():
        return None
    cols = ["record", "line_hash", "qkey"]
    a, b = a.assign(qkey=question_keys(a)), b.assign(qkey=question_keys(b))
    first_a, first_b = a[cols].drop_duplicates("record"), b[cols].drop_duplicates("record")
    both = first_a.merge(first_b, on="record", suffixes=("_a", "_b"))
    if both.empty:
        return None
    hashed = both["line_hash_a"].map(lambda h: isinstance(h, str) and h != "")
    same = hashed & (both["line_hash_a"] == both["line_hash_b"])
    same &= both["qkey_a"] == both["qkey_b"]
    return int((~same).sum())


def choose_key(a: pd.DataFrame, b: pd.DataFrame, key_by: str, one_dataset: bool) -> str:
    """``record`` for two sides of one dataset (``one_dataset``) that are provably the same source
    records (``record_mismatches`` is 0), else ``question``; ``key_by`` is the request's choice
    (auto, record, question). ``--key record`` on other rows is refused."""
    if key_by == "question":
        return "question"
    bad = record_mismatches(a, b) if one_dataset else None
    if key_by == "record" and bad != 0:
        why = "some rows have no record" if bad is None else f"{bad:,} records differ in content or question"
        raise UsageError(
            f"--key record: A and B are not the same records of one file ({why}); pair by question "
            "(--key question)"
        )
    return "record" if bad == 0 else "question"


def pair_frames(a: pd.DataFrame, b: pd.DataFrame, key_by: str = "auto", one_dataset: bool = False) -> Pairing:
    """Match A's rows with B's by question or record (``choose_key``); one merged row per paired
    question, in A's order."""
    key_by = choose_key(a, b, key_by, one_dataset)
    ka, ra = _keyed(a, key_by)
    kb, rb = _keyed(b, key_by)
    rows = ka.merge(kb.drop(columns="pair_key"), on="pair_id", suffixes=("_a", "_b"), how="inner", sort=False)
    rows = rows.drop(columns="pair_id")
    only_a = ka[~ka["pair_id"].isin(kb["pair_id"])]
    only_b = kb[~kb["pair_id"].isin(ka["pair_id"])]
    # rows without a key (no question text / no record) cannot pair: they count as unpaired
    no_key_a, no_key_b = len(a) - len(ka) - ra, len(b) - len(kb) - rb
    return Pairing(
        rows=rows.reset_index(drop=True),
        key_by=key_by,
        unpaired_a=only_a["name"].astype(str).tolist()[:MAX_LISTED],
        unpaired_b=only_b["name"].astype(str).tolist()[:MAX_LISTED],
        n_unpaired_a=len(only_a) + no_key_a,
        n_unpaired_b=len(only_b) + no_key_b,
        repeats_a=ra,
        repeats_b=rb,
    )
