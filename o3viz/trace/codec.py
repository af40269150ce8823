"""Validation and array codec for the trace file: every field read from an untrusted file goes
through these helpers, which raise ``TraceError`` naming the field's dotted path.

Numeric arrays are stored as ``{"dtype": "float16", "shape": [..], "data": "<base64>"}``, never as
long float lists.
"""

from __future__ import annotations

import base64
import binascii
import math
import sys
from typing import Any

import numpy as np

from o3viz.errors import TraceError

# Largest number of elements one encoded array may hold (about 256 MB of float16).
MAX_ARRAY_ELEMENTS = 128 * 1024 * 1024
_INT64 = (-(2**63), 2**63 - 1)
_FLOAT_MAX = sys.float_info.max
ARRAY_DTYPES = ("float16", "float32", "int32", "int64", "uint8", "bool")
# Steps over all rounds: ``MAX_STEPS`` is per round, and 64 rounds x 6,000 steps took 267 s to the
# first plot. A trace holds in all as many steps as one round may.
MAX_TOTAL_STEPS = 50_000

_TYPE_NAMES = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "a boolean",
    list: "a list",
    dict: "an object",
}


def fail(path: str, problem: str) -> TraceError:
    return TraceError(f"{path}: {problem}")


def _check_number(value: int | float, path: str) -> int | float:
    """``value`` itself when a 64-bit float can hold it: finite, and an integer of any length
    within float range (int vs float compares exactly, so a 400-digit integer is refused here
    instead of overflowing in ``math.isfinite`` or ``float``)."""
    if isinstance(value, int) and not -_FLOAT_MAX <= value <= _FLOAT_MAX:
        raise fail(path, "is out of range (past the largest 64-bit float)")
    if not math.isfinite(value):
        raise fail(path, "must be finite (NaN/Infinity are not allowed)")
    return value


def _check_type(value: Any, typ: type, path: str) -> Any:
    if typ is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise fail(path, "must be a number")
        return float(_check_number(value, path))
    if typ is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise fail(path, "must be an integer")
    if (
        typ is int and not _INT64[0] <= value <= _INT64[1]
    ):  # ids, counts, offsets: numpy and SQLite take int64
        raise fail(path, "is out of range (a 64-bit integer)")
    if not isinstance(value, typ):
        raise fail(path, f"must be {_TYPE_NAMES.get(typ, typ.__name__)}")
    return value


def number(value: Any, path: str) -> float:
    """``value`` as a float: a finite number, or an integer of any length within float range."""
    return _check_type(value, float, path)


def req(d: dict, key: str, typ: type, path: str) -> Any:
    """The required field ``d[key]`` checked to be of ``typ`` (floats must be finite)."""
    if not isinstance(d, dict):
        raise fail(path, "must be an object")
    if key not in d:
        raise fail(f"{path}.{key}" if path else key, "missing")
    return _check_type(d[key], typ, f"{path}.{key}" if path else key)


def opt(d: dict, key: str, typ: type, path: str, default: Any = None) -> Any:
    """Like ``req`` but a missing key or ``null`` gives ``default``."""
    if not isinstance(d, dict):
        raise fail(path, "must be an object")
    if d.get(key) is None:
        return default
    return _check_type(d[key], typ, f"{path}.{key}" if path else key)


def req_list(d: dict, key: str, path: str, item: type | None = None, max_len: int | None = None) -> list:
    value = req(d, key, list, path)
    sub = f"{path}.{key}" if path else key
    if max_len is not None and len(value) > max_len:
        raise fail(sub, f"has {len(value)} items, more than the limit {max_len}")
    if item is not None:
        return [_check_type(v, item, f"{sub}[{i}]") for i, v in enumerate(value)]
    return value


def check_total(items: list, key: str, limit: int, what: str) -> None:
    """Refuse, in one line and before any is parsed, more ``key`` entries over all ``items`` (raw
    round objects) than ``limit``: each round may be within its own limit and the sum not."""
    total = sum(
        len(x.get(key) or ()) if isinstance(x, dict) and isinstance(x.get(key), list) else 0 for x in items
    )
    if total > limit:
        raise fail("rounds", f"{total} {what} over all rounds, more than the limit {limit} a trace holds")


def check_json_value(value: Any, path: str) -> Any:
    """A free-form JSON value (settings, info dicts): only JSON types, numbers a float can hold."""
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, (int, float)):
        return _check_number(value, path)
    if isinstance(value, list):
        return [check_json_value(v, f"{path}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {str(k): check_json_value(v, f"{path}.{k}") for k, v in value.items()}
    raise fail(path, f"has an unsupported type {type(value).__name__}")


def literal(d: dict, key: str, choices: tuple[str, ...], path: str, default: str | None = None) -> str:
    value = req(d, key, str, path) if default is None else opt(d, key, str, path, default)
    if value not in choices:
        raise fail(f"{path}.{key}", f"must be one of {', '.join(choices)}, not {value[:40]!r}")
    return value


def encode_array(a: np.ndarray) -> dict:
    """``a`` as a compact JSON object (little-endian bytes, base64)."""
    a = np.ascontiguousarray(a)
    if a.dtype.name not in ARRAY_DTYPES:
        raise ValueError(f"cannot encode arrays of dtype {a.dtype}")
    raw = a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
    return {"dtype": a.dtype.name, "shape": list(a.shape), "data": base64.b64encode(raw).decode()}


def decode_array(
    obj: Any,
    path: str,
    *,
    ndim: int | None = None,
    dtypes: tuple[str, ...] = ARRAY_DTYPES,
    shape: tuple[int | None, ...] | None = None,
    max_dim: int = MAX_ARRAY_ELEMENTS,
) -> np.ndarray:
    """Inverse of ``encode_array``; checks dtype, shape, the byte count and finiteness. ``shape``
    declares the expected size of each dimension (None: any) and ``max_dim`` bounds every one; both
    are checked before any data is decoded, so a wrong declared shape costs nothing."""
    dtype = literal(obj, "dtype", dtypes, path)
    found = req_list(obj, "shape", path, int, max_len=8)
    ndim = len(shape) if shape is not None else ndim
    if ndim is not None and len(found) != ndim:
        raise fail(f"{path}.shape", f"must have {ndim} dimensions, has {len(found)}")
    if any(s < 0 for s in found):
        raise fail(f"{path}.shape", "must not be negative")
    if shape is not None and any(
        want is not None and s != want for s, want in zip(found, shape, strict=True)
    ):
        want = "[" + ", ".join("any" if w is None else str(w) for w in shape) + "]"
        raise fail(f"{path}.shape", f"is {found}, but must be {want}")
    if any(s > max_dim for s in found):
        raise fail(f"{path}.shape", f"{found} has a dimension over the limit {max_dim}")
    shape = found
    n = math.prod(shape)
    if n > MAX_ARRAY_ELEMENTS:
        raise fail(f"{path}.shape", f"{n} elements exceed the limit {MAX_ARRAY_ELEMENTS}")
    data = req(obj, "data", str, path)
    itemsize = np.dtype(dtype).itemsize
    if len(data) > (n * itemsize + 2) // 3 * 4 + 4:
        raise fail(f"{path}.data", f"is longer than shape {shape} allows")
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise fail(f"{path}.data", "is not valid base64") from None
    if len(raw) != n * itemsize:
        raise fail(f"{path}.data", f"holds {len(raw) // itemsize} values but shape {shape} needs {n}")
    a = np.frombuffer(raw, dtype=np.dtype(dtype).newbyteorder("<")).astype(dtype).reshape(shape)
    if a.dtype.kind == "f" and not np.isfinite(a).all():
        raise fail(f"{path}.data", "must be finite (NaN/Infinity are not allowed)")
    return a


def opt_array(d: dict, key: str, path: str, ndim: int) -> np.ndarray | None:
    """The optional array field ``d[key]`` (``decode_array``), None when absent or null."""
    return None if d.get(key) is None else decode_array(d[key], f"{path}.{key}", ndim=ndim)


def arrays_equal(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    if a is None or b is None:
        return a is b
    return a.dtype == b.dtype and a.shape == b.shape and bool(np.array_equal(a, b))
