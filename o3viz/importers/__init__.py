"""Importing reasoning traces that other models produced: ``import_trace`` and ``detect_format``.

Formats live in one table (``o3viz.importers.registry.FORMATS``, a ``o3viz.plugins.Registry``:
``register_format`` adds one, ``list_formats`` names them, ``o3viz import --list`` prints them);
the fields a dataset record is read from are one dataclass, ``ImportFields``. The built-in
formats, detected in this order unless ``format=`` names one:

- JSON: ``deepseek_chat`` / ``openai_chat`` (``choices[].message``), ``openai_responses``
  (``output`` items), ``anthropic_messages`` (``content`` blocks), ``chat_messages`` (a list of
  role/content messages), then ``json_dataset`` (a list of records or one record object);
- ``jsonl``: one JSON record per line (a record may itself be an API response);
- text: ``think_tags`` (``<think>…</think>``, chat-template dumps) else ``plain_text``;
- ``inspect_ai``: Inspect AI logs, the ``.eval`` zip (read member by member) and the ``.json`` log,
  one trace per sample (``record`` picks it).

>>> t = import_trace("<think>2+3=5. So the sum is 5.</think>The answer is 5.", reference="5")
>>> t.provenance.source["format"], t.final.answer, t.final.checks[-1].verdict
('think_tags', '5', 'correct')
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Iterator
from typing import Any

from o3viz.errors import TraceError, UsageError
from o3viz.importers.fields import ImportFields
from o3viz.importers.formats import RawInput, looks_like_path, read_input
from o3viz.importers.inspect_log import ZIP_MAGIC, read_eval_sample
from o3viz.importers.parquet import MAGIC as PARQUET_MAGIC
from o3viz.importers.parquet import read_row
from o3viz.importers.registry import (
    UnknownFormatError,
    detect_input,
    get_format,
    list_formats,
    register_format,
    unregister_format,
)
from o3viz.trace import Trace

__all__ = [
    "FORMATS",
    "ImportFields",
    "UnknownFormatError",
    "detect_format",
    "import_trace",
    "list_formats",
    "register_format",
    "unregister_format",
]


def __getattr__(name: str) -> Any:
    if name == "FORMATS":  # the table as it is now, formats registered later included
        return list_formats()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector (what import builds is acyclic; refcounting frees it).

    Measured on 16k and 32k one-claim steps: 7.1 s and 18.9 s with it on, 5.0 s and 10.2 s off."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _head(src: Any) -> bytes:
    """The first bytes of ``src`` when it names a file (binary containers are told by them)."""
    if not (isinstance(src, os.PathLike) or (isinstance(src, str) and looks_like_path(src))):
        return b""
    try:
        with open(src, "rb") as f:
            return f.read(8)
    except OSError:
        return b""


def read_source(src: Any, record: int | None = None) -> tuple[RawInput, int | None]:
    """``src`` decoded, and the record already picked from it (else None): an Inspect ``.eval``
    zip is read as its sample ``record`` and a Parquet file as its row ``record`` (only that member
    or row group is decompressed); anything else by ``read_input``."""
    if isinstance(src, RawInput):
        return src, None
    head = _head(src)
    if head.startswith(ZIP_MAGIC):
        rec = read_eval_sample(src, record)
        return RawInput(rec, "json", str(src)), rec["index"]
    if head.startswith(PARQUET_MAGIC):
        n, row = read_row(src, record)
        return RawInput([row], "json", str(src)), n  # a one-row dataset: the field options apply
    return read_input(src), None


def _detect(raw: RawInput, named: bool):
    """The format of ``raw``; a JSON record whose fields are named (``text_field=`` …) is a dataset
    record even when none of the default field names is in it (OpenThoughts' ``conversations``)."""
    try:
        return detect_input(raw)
    except UnknownFormatError:
        if named and raw.kind == "json" and isinstance(raw.data, dict | list):
            return get_format("json_dataset")
        raise


def detect_format(src: Any) -> str:
    """The format name of ``src`` (a path, bytes, str, dict or list); raises ``TraceError``."""
    return detect_input(read_source(src)[0]).name


def import_trace(
    src: Any,
    *,
    format: str | None = None,
    record: int | None = None,  # noqa: A002
    reference: str | None = None,
    question: str | None = None,
    fields: ImportFields | None = None,
    claims: bool = True,
    enrich: bool = False,
    model: Any = None,
    tokenizer: Any = None,
    layers: Any = (),
    **enrich_options: Any,
) -> Trace:
    """Import one reasoning trace from ``src`` (a path, bytes, str, dict or list) as a ``Trace``.

    ``record`` picks a dataset record (default 0); ``fields`` names dataset fields (dotted paths;
    ``text_field=`` … keywords are the same, shorter); ``reference``/``question`` override what
    the source says. ``enrich=True`` teacher-forces the text through a local model for attention
    (``o3viz.importers.enrich``, which takes the other keywords). Raises ``TraceError`` for
    unreadable input, naming the formats tried.
    """
    shorthand = ImportFields.take(enrich_options)
    if fields is not None and shorthand.given():
        raise UsageError(
            "give the dataset fields as fields=ImportFields(...) or as *_field= keywords, not both"
        )
    fields = fields or shorthand
    forced = get_format(format) if format is not None else None
    raw, picked = read_source(src, record)
    parser = forced or _detect(raw, bool(fields.given()))
    fmt = parser.name
    opts = {"record": None if picked is not None else record, **fields.as_dict()}
    try:
        imp = parser.parse(raw, opts)
    except UnknownFormatError:
        raise
    except TraceError as exc:
        raise TraceError(f"{raw.file or '(input)'}: as {fmt}: {exc}") from None
    if picked is not None:
        imp.record = picked
    if not (imp.thinking or imp.answer):
        raise UnknownFormatError(f"{raw.file or '(input)'}: as {fmt}: no reasoning or answer text found")
    from o3viz.importers.build import build_trace

    with _gc_paused():  # the collector rescans the growing heap: with it on, big imports go quadratic
        trace = build_trace(
            imp,
            file=raw.file,
            reference=reference,
            question=question,
            claims=claims,
            options={"format": format, **opts},
        )
    if enrich:
        from o3viz.importers.enrich import enrich_trace

        enrich_trace(trace, model=model, tokenizer=tokenizer, layers=layers, **enrich_options)
    return trace
