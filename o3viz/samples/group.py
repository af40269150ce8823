"""Sample sets made from traces that already exist: stored or imported traces that ask one
question are a set, whoever wrote them (GSM8K's four systems on each question, twenty models'
thinking on one puzzle, an Inspect log's epochs, JSONL rows that repeat a question).

Traces are grouped by the pairing key of their question (``o3viz.analysis.pairing.question_key``:
spacing, case, end punctuation and forms of one character folded), so "Janet’s ducks" and
"janet's ducks" are one question and "7 + 3" and "7 - 3" are two.

>>> from o3viz.testing.sample_sets import text_sample
>>> ts = [text_sample("So 18."), text_sample("So 14."), text_sample("So 3.", question="Other?")]
>>> group_by_question(ts)
[[0, 1], [2]]
"""

from __future__ import annotations

import re
from pathlib import Path

from o3viz.analysis.pairing import question_hash, question_key
from o3viz.errors import UsageError
from o3viz.samples.request import MAX_SAMPLES
from o3viz.samples.sets import SET_TAG, SampleSet, save_set
from o3viz.store.query import Query
from o3viz.store.question_keys import fill_question_keys
from o3viz.store.store import Store
from o3viz.trace import Trace

__all__ = ["MAX_GROUPS", "MAX_TEXT_FILES", "group_by_question", "import_texts_as_set", "sets_from_dataset"]

MAX_GROUPS = 2000  # sets one grouping makes at most
MAX_TEXT_FILES = MAX_SAMPLES  # text files one set is made of
MAX_DATASET_ROWS = 200_000  # rows of a dataset read for grouping


def group_by_question(traces: list[Trace]) -> list[list[int]]:
    """Indices of ``traces`` grouped by question key, groups in order of first appearance; a
    trace without a question is a group of its own."""
    groups: dict[str, list[int]] = {}
    out: list[list[int]] = []
    for i, t in enumerate(traces):
        key = question_key(t.task.question)
        if not key:
            out.append([i])
            continue
        if key not in groups:
            groups[key] = []
            out.append(groups[key])
        groups[key].append(i)
    return out


def _set_name(prefix: str, k: int) -> str:
    base = re.sub(r"[^A-Za-z0-9._:+-]+", "-", prefix).strip("-.") or "set"
    return f"{base[:60]}:q{k}"


def sets_from_dataset(
    store: Store, dataset: str, *, prefix: str | None = None, min_n: int = 2, limit: int = MAX_GROUPS
) -> list[SampleSet]:
    """One set per question of stored ``dataset`` asked at least ``min_n`` times (at most
    ``MAX_SAMPLES`` traces each, at most ``limit`` sets), named ``PREFIX:qK`` (K: the question's
    place in the dataset, 1-based; ``prefix`` defaults to the dataset's name). The members are
    copies of the traces, tagged as the set's; the dataset itself is left as it is."""
    if not 2 <= min_n <= MAX_SAMPLES:
        raise UsageError(f"--min-n {min_n}: give 2 to {MAX_SAMPLES}")
    if not 1 <= limit <= MAX_GROUPS:
        raise UsageError(f"--limit {limit}: give 1 to {MAX_GROUPS}")
    rows = store.select(
        Query(dataset=[dataset], sort="id", descending=False),
        ("key", "question", "tags", "question_key"),
        max_rows=MAX_DATASET_ROWS,
    )
    if not rows:
        raise UsageError(f"no dataset {dataset!r} in the store (`o3viz library list` shows the datasets)")
    # keyed on the whole question (the index's question column is clipped: two questions behind
    # one long preamble must not share a group); a row indexed before the key column gets it here
    filled = fill_question_keys(store, [key for key, _, _, qk in rows if qk is None])
    groups: dict[str, list[str]] = {}
    for key, question, tags, qkey in rows:
        if SET_TAG in (tags or "").split(","):
            raise UsageError(f"{dataset!r} is a sample set already; o3viz tree {dataset} draws it")
        qkey = qkey if qkey is not None else filled.get(key, question_hash(question))
        if qkey:
            groups.setdefault(qkey, []).append(key)
    made = []
    for k, keys in enumerate(groups.values(), 1):
        if len(keys) < min_n:
            continue
        traces = [store.trace(key) for key in keys[:MAX_SAMPLES]]
        settings = {"source": "import", "drawn": "grouped", "from_dataset": dataset, "requested": len(keys)}
        made.append(save_set(store, _set_name(prefix or dataset, k), traces, settings))
        if len(made) >= limit:
            break
    return made


def import_texts_as_set(
    store: Store, paths: list[Path], name: str, *, question: str, reference: str | None = None
) -> SampleSet:
    """Plain-text replies (one file each, e.g. twenty models' thinking on one puzzle) imported as
    traces of ``question`` and stored as set ``name``."""
    from o3viz.importers import import_trace

    if not 2 <= len(paths) <= MAX_TEXT_FILES:
        raise UsageError(f"{len(paths)} text files: a set is made of 2 to {MAX_TEXT_FILES}")
    if not question.strip():
        raise UsageError("--question: the question the texts answer is empty")
    traces = [import_trace(p, question=question, reference=reference, claims=False) for p in paths]
    settings = {"source": "import", "drawn": "imported texts", "requested": len(paths)}
    return save_set(store, name, traces, settings)
