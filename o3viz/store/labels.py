"""People's step labels in the store: an append-only ``labels`` table in the SQLite index and the
append-only files it is rebuilt from (``labels/labels.jsonl`` in the store folder, one JSON line per
label; ``reindex`` puts back every line the table lacks).

A label is never edited: a newer one by the same labeller on the same step supersedes it
(``current_labels``). Writers append under an exclusive ``flock`` of the file, one ``write`` per
batch, then insert the rows; a line is inserted once (its ``uid``), so two processes labelling at
once, or a crash between the file and the row, lose nothing.

>>> check_label(Label(key="ab12cd34ef567890", round=0, step=2, labeller="ann", verdict="right"))
Traceback (most recent call last):
...
o3viz.errors.UsageError: verdict 'right': one of correct, wrong, unsure
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import time
import uuid
from dataclasses import dataclass, field, fields

from o3viz.errors import O3vizError, UsageError
from o3viz.store.store import Store
from o3viz.text.classify import TYPES as STEP_TYPES
from o3viz.trace.bounded import read_lines
from o3viz.trace.ids import parse_step_ref, step_ref
from o3viz.trace.safejson import loads

VERDICTS = ("correct", "wrong", "unsure")
MAX_LABELLER_CHARS = 100
MAX_NOTE_CHARS = 2_000
MAX_LABEL_LINE = 8_192  # a line longer than this in the file is not a label (a hand-edited file)
MAX_ID_CHARS = 64  # a key or a uid
LABEL_FILE = "labels/labels.jsonl"


@dataclass
class Label:
    """One person's (or one imported labeller's) judgement of one step."""

    key: str  # the trace's content key
    round: int
    step: int
    labeller: str  # at most 100 characters
    verdict: str  # correct | wrong | unsure
    first_error: bool = False  # "the first error is here"
    type: str | None = None  # a step-type correction (a Thought Anchors type)
    note: str = ""
    time: float = field(default_factory=time.time)  # seconds since the epoch
    uid: str = field(default_factory=lambda: uuid.uuid4().hex)  # one line of the file, once

    @property
    def step_id(self) -> str:
        """``R:I``, as the CLI takes it."""
        return step_ref(self.round, self.step)

    def to_dict(self) -> dict:
        return {f: getattr(self, f) for f in _FIELDS}  # every field is a scalar: no asdict deep copy


_FIELDS = tuple(f.name for f in fields(Label))


def parse_step(text: str) -> tuple[int, int]:
    """``"R:I"`` (or a node id ``step:R:I``) as (round, step); else one ``UsageError`` line.

    >>> parse_step("0:3"), parse_step("step:1:4")
    ((0, 3), (1, 4))
    """
    node = parse_step_ref(text)
    if node is None:
        raise UsageError(f"step {text!r}: give it as R:I, e.g. 0:3 (round 0, step 3)")
    return node.round, node.index  # type: ignore[return-value]


def check_label(label: Label) -> Label:
    """``label`` when every field is of its type and within its bounds; else one ``UsageError``."""
    if label.verdict not in VERDICTS:
        raise UsageError(f"verdict {label.verdict!r}: one of {', '.join(VERDICTS)}")
    name = label.labeller.strip() if isinstance(label.labeller, str) else ""
    if not name:
        raise UsageError("the labeller needs a name (--by NAME)")
    if len(name) > MAX_LABELLER_CHARS:
        raise UsageError(f"the labeller's name is {len(name)} characters; at most {MAX_LABELLER_CHARS}")
    if label.type is not None and label.type not in STEP_TYPES:
        raise UsageError(f"step type {label.type!r}: one of {', '.join(STEP_TYPES)}")
    if not isinstance(label.note, str) or len(label.note) > MAX_NOTE_CHARS:
        raise UsageError(f"the note must be text of at most {MAX_NOTE_CHARS} characters")
    for name_, value in (("round", label.round), ("step", label.step)):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**31:
            raise UsageError(f"{name_} {value!r}: must be a whole number from 0")
    _check_types(label)
    label.labeller = name
    label.first_error = bool(label.first_error)
    return label


def _check_types(label: Label) -> None:
    """The fields a file can carry in any JSON type: each must be of its own (a ``"time": null``
    line would pass ``reindex`` and break every reader after it)."""
    if not isinstance(label.key, str) or not 0 < len(label.key) <= MAX_ID_CHARS:
        raise UsageError(f"key {str(label.key)[:40]!r}: must be a trace's key")
    if not isinstance(label.uid, str) or not 0 < len(label.uid) <= MAX_ID_CHARS:
        raise UsageError(f"uid {str(label.uid)[:40]!r}: must be text of at most {MAX_ID_CHARS} characters")
    t = label.time
    if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t):
        raise UsageError(f"time {str(t)[:40]!r}: must be seconds since the epoch")
    if not isinstance(label.first_error, bool | int):
        raise UsageError(f"first_error {str(label.first_error)[:40]!r}: must be true or false")
    label.time = float(t)


def step_counts(store: Store, key: str) -> list[int]:
    """How many steps each round of trace ``key`` has (``StoreError`` for a key the store lacks)."""
    return [len(r.steps) for r in store.trace(key).rounds]


def check_step(store: Store, key: str, round: int, step: int, counts: list[int] | None = None) -> None:
    """Refuse a key the store lacks or a step its trace lacks, in one line (``counts``: the
    trace's ``step_counts``, when the caller has them)."""
    counts = step_counts(store, key) if counts is None else counts
    if round >= len(counts) or step >= counts[round]:
        n = counts[round] if round < len(counts) else 0
        raise UsageError(
            f"trace {key} has no step {step_ref(round, step)} (round {round} has {n} steps; rounds: {len(counts)})"
        )


# ---------------------------------------------------------------- table and file


_TABLE = (
    "CREATE TABLE IF NOT EXISTS labels (id INTEGER PRIMARY KEY, uid TEXT NOT NULL UNIQUE, key TEXT, "
    "round INTEGER, step INTEGER, labeller TEXT, verdict TEXT, first_error INTEGER, type TEXT, note TEXT, "
    "time REAL)"
)


def _ensure_table(store: Store) -> None:
    """Create the table on first use (a no-op lookup once it exists; the index schema is untouched,
    so an older o3viz reading this store simply ignores the table)."""
    with store.guard("creating the labels table"):
        store.conn.execute(_TABLE)
        store.conn.execute("CREATE INDEX IF NOT EXISTS labels_key ON labels (key, round, step)")
        store.conn.execute(
            "CREATE INDEX IF NOT EXISTS labels_who ON labels (key, round, step, labeller, time)"
        )


def _append_lines(store: Store, labels: list[Label]) -> None:
    """Append the labels to the file in one write under an exclusive lock, then flush to disk."""
    path = store.root / LABEL_FILE
    data = "".join(json.dumps(lab.to_dict(), sort_keys=True) + "\n" for lab in labels).encode()
    with store.guard("writing labels"):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            # a torn last line (a crash mid-write) must not swallow this batch's first label
            if os.fstat(fd).st_size and os.pread(fd, 1, os.fstat(fd).st_size - 1) != b"\n":
                data = b"\n" + data
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)  # closing releases the lock


def _insert_rows(store: Store, labels: list[Label]) -> int:
    _ensure_table(store)
    added = 0
    with store.transaction("adding labels") as conn:
        for lab in labels:
            d = lab.to_dict()
            cur = conn.execute(
                f"INSERT OR IGNORE INTO labels ({', '.join(_FIELDS)}) VALUES ({', '.join('?' * len(_FIELDS))})",
                [int(d[f]) if f == "first_error" else d[f] for f in _FIELDS],
            )
            added += cur.rowcount
    return added


def add_labels(store: Store, labels: list[Label], *, check_steps: bool = True) -> int:
    """Validate and store ``labels`` (the file first: it is the truth); returns how many."""
    labels = [check_label(lab) for lab in labels]
    if check_steps:
        for key, rnd, step in sorted({(lab.key, lab.round, lab.step) for lab in labels}):
            check_step(store, key, rnd, step)
    if not labels:
        return 0
    _append_lines(store, labels)
    return _insert_rows(store, labels)


def read_label_file(store: Store) -> tuple[list[Label], list[str]]:
    """Every label line of the file, and one error line per line that is not a label. Lines are read
    through ``o3viz.trace.bounded.read_lines``: a line over ``MAX_LABEL_LINE`` is skipped in pieces,
    never held whole."""
    path = store.root / LABEL_FILE
    if not path.is_file():
        return [], []
    out, errors = [], []
    with store.guard("reading labels"), open(path, "rb") as fh:
        for n, line, problem in read_lines(fh, MAX_LABEL_LINE):
            if problem is None and not line.strip():
                continue
            try:
                if problem is not None:
                    raise UsageError("line too long")
                d = loads(line, "JSON")
                if not isinstance(d, dict):
                    raise UsageError(f"a JSON {type(d).__name__}, not an object")
                out.append(check_label(Label(**{k: d[k] for k in _FIELDS if k in d})))
            except (ValueError, TypeError, O3vizError) as exc:
                errors.append(f"{LABEL_FILE} line {n}: not a label ({str(exc)[:80]})")
    return out, errors


def rebuild_labels(store: Store) -> tuple[int, list[str]]:
    """Insert every label of the file that the table lacks (``reindex`` calls it)."""
    labels, errors = read_label_file(store)
    return (_insert_rows(store, labels) if labels else 0), errors


# ---------------------------------------------------------------- reading


def all_labels(store: Store, keys: list[str] | None = None) -> list[Label]:
    """Every label (superseded ones too) of ``keys`` (default: all), oldest first."""
    _ensure_table(store)
    sql = f"SELECT {', '.join(_FIELDS)} FROM labels"
    out: list[Label] = []
    with store.guard("reading labels"):
        if keys is None:
            rows = store.conn.execute(sql + " ORDER BY time, id").fetchall()
        else:
            rows = []
            for i in range(0, len(keys), 500):
                chunk = keys[i : i + 500]
                where = f" WHERE key IN ({', '.join('?' * len(chunk))}) ORDER BY time, id"
                rows += store.conn.execute(sql + where, chunk).fetchall()
            rows.sort(key=lambda r: r["time"] if isinstance(r["time"], int | float) else 0.0)
    for r in rows:
        d = dict(r)
        d["first_error"] = bool(d["first_error"])
        try:  # a row an older o3viz put back from a bad line ("time": null) is left out
            out.append(check_label(Label(**d)))
        except (UsageError, TypeError):
            continue
    return out


def latest_labels(store: Store, items: set[tuple[str, int, int, str]]) -> list[Label]:
    """The label in force for each (key, round, step, labeller) of ``items`` that has one: one
    indexed lookup each, so a batch costs what it holds, not what the trace has."""
    _ensure_table(store)
    sql = (
        f"SELECT {', '.join(_FIELDS)} FROM labels WHERE key = ? AND round = ? AND step = ? "
        "AND labeller = ? ORDER BY time DESC, id DESC LIMIT 1"
    )
    out = []
    with store.guard("reading labels"):
        for item in sorted(items):
            row = store.conn.execute(sql, item).fetchone()
            if row is not None:
                d = dict(row)
                d["first_error"] = bool(d["first_error"])
                out.append(Label(**d))
    return out


def carry_labels(store: Store, old: str, new: str) -> int:
    """Every label of trace ``old`` (superseded ones too, times kept) also on trace ``new``, for a
    trace stored again under a new key with the same steps (importance scores added); returns
    how many were carried. Labels ``new`` already has (same step, labeller, verdict, time) are not
    added twice."""
    have = {(x.round, x.step, x.labeller, x.verdict, x.time) for x in all_labels(store, [new])}
    moved = [
        Label(new, x.round, x.step, x.labeller, x.verdict, x.first_error, x.type, x.note, x.time)
        for x in all_labels(store, [old])
        if (x.round, x.step, x.labeller, x.verdict, x.time) not in have
    ]
    return add_labels(store, moved, check_steps=False) if moved else 0


def current_labels(labels: list[Label]) -> list[Label]:
    """The labels in force: per (trace, step, labeller), the newest (later time; ties: later in the
    list).

    >>> a = Label("k", 0, 1, "ann", "wrong", time=1.0)
    >>> b = Label("k", 0, 1, "ann", "correct", time=2.0)
    >>> [lab.verdict for lab in current_labels([b, a])]
    ['correct']
    """
    latest: dict[tuple, Label] = {}
    for lab in sorted(labels, key=lambda lab: lab.time):
        latest[(lab.key, lab.round, lab.step, lab.labeller)] = lab
    return list(latest.values())


def labellers(labels: list[Label]) -> list[str]:
    """The labellers' names, in order of their first label."""
    return list(dict.fromkeys(lab.labeller for lab in labels))


def label_count(store: Store) -> int:
    """How many labels the table holds (superseded ones too): a cache stamp for the pages."""
    _ensure_table(store)
    with store.guard("counting labels"):
        return store.conn.execute("SELECT count(*) FROM labels").fetchone()[0]
