"""What a trace's ``.meta.json`` in the store may hold, validated like a trace file: the file is
untrusted (anyone with the folder can edit it), so a wrong type is refused naming the field, and
only these fields ever reach the index.

>>> check_meta({"name": "a", "record": 3, "added_at": 1.5e9}, "ab12.meta.json")
{'name': 'a', 'record': 3, 'added_at': 1500000000.0}
>>> check_meta({"name": ["a"]}, "ab12.meta.json")
Traceback (most recent call last):
...
o3viz.errors.TraceError: ab12.meta.json: name: must be a string
"""

from __future__ import annotations

import math
from typing import Any

from o3viz.errors import TraceError

MAX_META_BYTES = 1 << 20  # a metadata file is a few hundred bytes
LATEST_TIME = 253402300799.0  # 9999-12-31: the last moment ``datetime.fromtimestamp`` can show
META_FIELDS: dict[str, type] = {
    "source": str,  # run | sample | upload | import
    "dataset": str,
    "name": str,
    "record": int,  # 1-based line or position in the source file
    "part": str,
    "line_hash": str,
    "parts": int,
    "added_at": float,  # seconds since the epoch
    "tags": str,  # comma-separated
    "parent": str,  # a branch: the key of the trace it forked from
    "fork": str,  # a branch: the parent's step it forked at, "R:I"
    "branch": str,  # a branch: edit | resample
    "replaces": str,  # the keys this trace replaced, oldest first, comma-separated (``successors``)
}
_TYPE_NAMES = {str: "a string", int: "an integer", float: "a number"}


def _check(name: str, value: Any) -> Any:
    typ = META_FIELDS[name]
    if isinstance(value, bool) or not isinstance(value, (int, float) if typ is float else typ):
        raise TraceError(f"{name}: must be {_TYPE_NAMES[typ]}")
    if typ is int and not 0 <= value < 2**63:
        raise TraceError(f"{name}: {value} is out of range")
    if typ is float:
        value = float(value)
        if not (math.isfinite(value) and 0 <= value <= LATEST_TIME):
            raise TraceError(f"{name}: {value} is not a time o3viz can show")
    return value


def check_meta(meta: Any, where: str) -> dict:
    """The store's fields of ``meta`` (others are dropped; ``None`` means absent), each of its type;
    else one ``TraceError`` line naming ``where`` and the field."""
    if not isinstance(meta, dict):
        raise TraceError(f"{where}: must be a JSON object, not {type(meta).__name__}")
    out = {}
    for name, value in meta.items():
        if name in META_FIELDS and value is not None:
            try:
                out[name] = _check(name, value)
            except TraceError as exc:
                raise TraceError(f"{where}: {exc}") from None
    return out
