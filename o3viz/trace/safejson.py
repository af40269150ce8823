"""Parsing untrusted JSON (trace files, store metadata, imported records) with its cost bounded by
its size: nesting depth, the number of values per byte, and the digits of an integer.

A small file must not cost a lot: Python spends 30 to 60 bytes on each list, dict or number, so
``[[],[],...]`` costs twenty times its size, and converting a 5,000-digit integer raises
``ValueError`` (CPython's 4,300-digit limit) and is quadratic below it. Before ``json.loads`` runs,
``scan`` counts the structure outside strings in chunks of ``SCAN_CHUNK`` bytes (so the scan itself
needs a few MiB, not tens of bytes per input byte) and refuses, in one ``TraceError`` line:

- nesting deeper than ``MAX_NESTING`` (the stdlib parser would recurse);
- more values (``,`` ``:`` ``[`` ``{`` outside strings) than ``BASE_VALUES + VALUES_PER_MB`` per MiB,
  or more containers than ``BASE_CONTAINERS + CONTAINERS_PER_MB`` per MiB. Real traces stay under
  a sixth of these (a token with 64 alternatives is about 170,000 values per MiB);

and ``json_int`` refuses an integer of more than ``MAX_INT_DIGITS`` digits while parsing, and
``NaN``, ``Infinity`` and ``-Infinity`` (Python's ``json`` reads them; JSON has no such numbers).

``loads`` is the one way o3viz parses JSON it did not write itself (trace files, the store's files,
every importer, the app's upload): one scan, one parse, one error mapping. Other tools' JSON (an
Inspect log's tool arguments, a dataset record) may nest deeper than a trace, so importers pass
``max_nesting=MAX_IMPORT_NESTING``, still well below the parser's own recursion limit.

>>> loads(b'{"a": [1, 2.5, "x"]}', "(file)")
{'a': [1, 2.5, 'x']}
>>> loads(b"[" + b"0," * 3_000_000 + b"0]", "(file)")
Traceback (most recent call last):
...
o3viz.errors.TraceError: (file): 3000001 JSON values in 5.7 MiB, more than the limit of 2548576 (a small file that would cost too much memory)
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from o3viz.errors import TraceError

MAX_NESTING = 64  # deepest legitimate trace nesting is about 10
MAX_IMPORT_NESTING = 256  # other tools' JSON; below the stdlib parser's recursion limit (~1000)
MAX_INT_DIGITS = 1000  # converts in ~10 µs; CPython refuses past 4,300 and is quadratic below
BASE_VALUES = 1 << 20
VALUES_PER_MB = 256 * 1024
BASE_CONTAINERS = 256 * 1024
CONTAINERS_PER_MB = 64 * 1024
SCAN_CHUNK = 1 << 20
_QUOTE, _BACKSLASH = ord('"'), ord("\\")
_OPEN, _OPEN2, _CLOSE, _CLOSE2 = ord("["), ord("{"), ord("]"), ord("}")
_COMMA, _COLON = ord(","), ord(":")


def json_int(digits: str) -> int:
    """``parse_int`` for ``json.loads``: an integer of at most ``MAX_INT_DIGITS`` digits."""
    n = len(digits) - digits.startswith("-")
    if n > MAX_INT_DIGITS:
        raise TraceError(f"a number with {n} digits, more than the limit of {MAX_INT_DIGITS}")
    return int(digits)


def _reject_constant(name: str) -> None:
    raise TraceError(f"{name} is not allowed; numbers must be finite")


def _chunks(data: bytes | str):
    if isinstance(data, str):
        for a in range(0, len(data), SCAN_CHUNK):
            yield np.frombuffer(data[a : a + SCAN_CHUNK].encode("utf-8", "surrogatepass"), np.uint8)
    else:
        view = memoryview(data)
        for a in range(0, len(data), SCAN_CHUNK):
            yield np.frombuffer(view[a : a + SCAN_CHUNK], np.uint8)


def _unescaped_quotes(buf: np.ndarray, run: int) -> np.ndarray:
    """Quotes not escaped by an odd run of backslashes; ``run`` backslashes ended the last chunk."""
    quote = buf == _QUOTE
    esc = buf == _BACKSLASH
    if not quote.any() or not (run or esc.any()):
        return quote
    idx = np.arange(len(buf))
    last_plain = np.maximum.accumulate(np.where(esc, -1 - run, idx))  # last non-backslash at or before i
    before = np.concatenate(([-1 - run], last_plain[:-1]))
    return quote & ((idx - 1 - before) % 2 == 0)


def structure(data: bytes | str) -> tuple[int, int, int]:
    """(deepest nesting, values, containers) outside strings; memory is per chunk, not per file.

    >>> structure(b'{"a": [1, "[,\\\\"]", {}]}')  # the string holds an escaped quote
    (3, 6, 3)
    """
    depth = deepest = values = boxes = 0
    inside = 0  # 1 when the previous chunk ended inside a string
    run = 0  # backslashes that ended the previous chunk
    for buf in _chunks(data):
        quote = _unescaped_quotes(buf, run)
        parity = np.bitwise_xor.accumulate(quote.view(np.uint8)) ^ inside  # 1: inside a string
        outside = parity == 0
        opens = ((buf == _OPEN) | (buf == _OPEN2)) & outside
        closes = ((buf == _CLOSE) | (buf == _CLOSE2)) & outside
        level = np.cumsum(opens.view(np.int8) - closes.view(np.int8), dtype=np.int64) + depth
        deepest = max(deepest, int(level.max()))
        depth = int(level[-1])
        n_open = int(np.count_nonzero(opens))
        boxes += n_open
        values += n_open + int(np.count_nonzero(((buf == _COMMA) | (buf == _COLON)) & outside))
        inside = int(parity[-1])
        esc = buf == _BACKSLASH
        run = run + len(buf) if esc.all() else int(np.argmin(esc[::-1]))
    return deepest, values, boxes


def scan(data: bytes | str, where: str, *, max_nesting: int | None = MAX_NESTING) -> None:
    """Refuse, in one line, JSON whose nesting or number of values its size does not allow
    (``max_nesting=None``: the caller relies on the parser's own recursion guard)."""
    deepest, values, boxes = structure(data)
    if max_nesting is not None and deepest > max_nesting:
        raise TraceError(f"{where}: nesting deeper than the limit of {max_nesting}")
    mb = len(data) / (1 << 20)
    for what, n, cap in (
        ("lists and objects", boxes, BASE_CONTAINERS + int(CONTAINERS_PER_MB * mb)),
        ("JSON values", values, BASE_VALUES + int(VALUES_PER_MB * mb)),
    ):
        if n > cap:
            raise TraceError(
                f"{where}: {n} {what} in {mb:.1f} MiB, more than the limit of {cap} "
                "(a small file that would cost too much memory)"
            )


class BrokenJSON(TraceError):
    """Text that is not JSON at all (a syntax error, not UTF-8), as opposed to JSON over a limit: a
    caller that can read the text another way (as JSON lines) catches only this."""


def loads(data: bytes | str, where: str, *, max_nesting: int = MAX_NESTING) -> Any:
    """``json.loads`` of untrusted input within the bounds above; every problem one ``TraceError``
    line that starts with ``where``.

    >>> loads('{"p": NaN}', "record")
    Traceback (most recent call last):
    ...
    o3viz.errors.TraceError: record: NaN is not allowed; numbers must be finite
    """
    scan(data, where, max_nesting=max_nesting)
    return parse(data, where, max_nesting=max_nesting)


def parse(data: bytes | str, where: str, *, max_nesting: int = MAX_NESTING) -> Any:
    """``loads`` without the scan, for a part of a text that ``scan`` has passed whole (a line of a
    JSON-lines file whose earlier lines parsed: those are balanced, so the whole text's depth and
    counts bound this line's)."""
    try:
        return json.loads(data, parse_int=json_int, parse_constant=_reject_constant)
    except TraceError as exc:
        raise TraceError(f"{where}: {exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BrokenJSON(f"{where}: not valid JSON, perhaps truncated ({exc})") from None
    except RecursionError:
        raise TraceError(f"{where}: nesting deeper than the limit of {max_nesting}") from None
    except ValueError as exc:  # e.g. an integer past CPython's digit limit that slipped through
        raise TraceError(f"{where}: not valid JSON ({' '.join(str(exc).split())[:200]})") from None


# For a reader that walks a long text a value at a time (``raw_decode``), with the same number
# guards as ``loads``; it raises ``TraceError`` for a number it refuses.
DECODER = json.JSONDecoder(parse_int=json_int, parse_constant=_reject_constant)
