"""Many real trace files from a few: each variant is a seed trace (imported from ``../shared/data``)
with its question, model and source grade varied, written to the store as a real file with its
metadata, and its index row and search text derived from the seed's without parsing again. A test
(tests/benchmarks/test_trace_variants.py) checks that ``reindex`` computes the very same rows.
"""

from __future__ import annotations

import gzip
import json
import random
from dataclasses import dataclass

from o3viz.analysis.pairing import question_hash
from o3viz.store.index import COLUMNS, QUESTION_CHARS, IndexRow
from o3viz.store.store import Store

WORDS = ("eggs", "total", "wait", "check", "dollars", "minutes", "hence", "remainder", "twice", "answer")
PER_DATASET = 10_000  # traces per dataset in the big stores


@dataclass
class Seed:
    row: dict  # the seed's index row
    text: str  # its search text
    doc: dict  # its trace file, parsed JSON


def load_seeds(store: Store, rows: list[dict]) -> list[Seed]:
    texts = dict(store.conn.execute("SELECT t.key, f.text FROM traces t JOIN steps_fts f ON f.rowid = t.id"))
    return [Seed(r, texts[r["key"]], json.loads(gzip.decompress(store.read_file(r["key"])))) for r in rows]


def variant(seed: Seed, i: int, n: int, rng: random.Random) -> tuple[bytes, dict, dict, str]:
    """Trace ``i`` of ``n``: (gzip bytes, metadata, row fields, search text)."""
    doc, q0 = seed.doc, seed.doc["task"]["question"]
    question = f"{q0} {rng.choice(WORDS)}{i % 97}"
    model = f"{doc['provenance'].get('model_id') or seed.row['model']}-v{rng.randrange(3)}"
    info = {**(doc.get("info") or {}), "variant": i}  # every variant's bytes, so its key, differ
    info.pop("content_id", None)  # a made-up variant is no import of a record: no content identity
    fields = {"question": " ".join(question.split())[:QUESTION_CHARS], "model": model, "content_id": "",
              "question_key": question_hash(question)}  # fmt: skip
    if seed.row["correct_by"] == "file" and rng.random() < 0.2:  # a re-graded copy
        info["file_is_correct"] = rng.random() < 0.5
        fields["correct"] = fields["source_correct"] = int(info["file_is_correct"])
    out = {**doc, "task": {**doc["task"], "question": question}, "info": info}
    out["provenance"] = {**doc["provenance"], "model_id": model}
    data = gzip.compress(json.dumps(out, separators=(",", ":")).encode(), compresslevel=6, mtime=0)
    meta = {
        "source": "import",
        "dataset": f"set{i % max(1, n // PER_DATASET)}",
        "name": f"{seed.row['name']} v{i}",
        "record": i + 1,
        "part": seed.row["part"],
        "line_hash": f"{i:016x}",
        "parts": 1,
        "added_at": 1.7e9 + i,
    }
    return data, meta, fields, question + seed.text[len(q0) :]


def write_variants(
    store: Store, seeds: list[Seed], start: int, stop: int, n: int
) -> list[tuple[IndexRow, str]]:
    """Write variants ``start..stop`` of ``n`` (files without an fsync each); their rows and texts."""
    rng = random.Random(start)
    out = []
    for i in range(start, stop):
        seed = seeds[rng.randrange(len(seeds))]
        data, meta, fields, text = variant(seed, i, n, rng)
        key, meta = store.write_encoded(data, meta, durable=False)
        row = {c: seed.row[c] for c in COLUMNS} | fields | meta | {"key": key, "file_bytes": len(data)}
        out.append((IndexRow(**row), text))
    return out
