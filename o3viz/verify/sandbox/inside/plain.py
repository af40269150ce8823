"""Plain data across the judge/candidate pipe: tagged JSON that can carry values, never behaviour.

One message is one line of JSON (``ensure_ascii``: no raw newline inside). A value is encoded as:

- JSON scalars for ``None``, ``True``/``False``, ints with ``abs(x) < 2**63``, finite floats, str
  (lone surrogates survive as ``\\udxxx`` escapes);
- a JSON array whose first item is a one-letter tag for everything else:
  ``["I", hex]`` big int, ``["F", "nan"|"inf"|"-inf"]`` float, ``["c", re, im]`` complex,
  ``["b", hex]`` bytes, ``["l", *items]`` list, ``["t", *items]`` tuple, ``["s", *items]`` set,
  ``["f", *items]`` frozenset, ``["d", [k, v], ...]`` dict (any plain hashable key),
  ``["r", start, stop, step]`` range, ``["g", *items]`` an iterator or generator (sent as its
  items; arrives as an iterator over them), and ``["o", type_name, repr_text]`` for any other
  object: it arrives as an ``Opaque`` that equals nothing but itself.

Encoding uses exact types (``type(x) is int``), so a subclass with a rigged ``__eq__`` never
arrives as itself: an int/str/list/dict subclass is sent as the plain value it holds, anything
else as ``Opaque``. Decoding builds only the types above and refuses nesting deeper than
``MAX_DEPTH``; it never imports, unpickles, or calls anything from the other side.
"""

import json
import math
import os

MAX_DEPTH = 100
MAX_ITEMS = 1_000_000  # items taken from an iterator the candidate returns
_BIG = 1 << 63


class PlainDataError(Exception):
    """A value that cannot cross (encoding), or a message that is not plain data (decoding)."""


class Opaque:
    """Stands in for an object that is not plain data: equal only to itself, never a rigged __eq__."""

    __slots__ = ("type_name", "text")

    def __init__(self, type_name, text):
        self.type_name = type_name
        self.text = text

    def __repr__(self):
        return "<" + self.type_name + ": " + self.text + ">"


def _encode_float(x):
    if math.isfinite(x):
        return x
    return ["F", "nan" if x != x else ("inf" if x > 0 else "-inf")]


def _encode_int(x):
    x = int.__index__(x)
    return x if -_BIG < x < _BIG else ["I", hex(x)]


def encode(value, strict, depth=0):
    """A JSON-ready form of ``value``. ``strict``: raise on non-plain values (the judge's arguments);
    else send them as Opaque (the candidate's results)."""
    if depth > MAX_DEPTH:
        raise PlainDataError("nested deeper than " + str(MAX_DEPTH))
    kind = type(value)
    if value is None or kind is bool or kind is str:
        return value
    if kind is int:
        return _encode_int(value)
    if kind is float:
        return _encode_float(value)
    return _encode_other(value, strict, depth)


def _encode_other(value, strict, depth):
    d = depth + 1
    for base, tag in ((list, "l"), (tuple, "t"), (set, "s"), (frozenset, "f")):
        if isinstance(value, base) and not (strict and type(value) is not base):
            return [tag] + [encode(v, strict, d) for v in base.__iter__(value)]
    if isinstance(value, dict) and not (strict and type(value) is not dict):
        return ["d"] + [[encode(k, strict, d), encode(v, strict, d)] for k, v in dict.items(value)]
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return _encode_int(value)
    if isinstance(value, float):
        return _encode_float(float.__float__(value))
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, complex):
        return ["c", _encode_float(value.real), _encode_float(value.imag)]
    if isinstance(value, (bytes, bytearray)):
        return ["b", bytes(value).hex()]
    if type(value) is range:
        return ["r", _encode_int(value.start), _encode_int(value.stop), _encode_int(value.step)]
    if strict:
        raise PlainDataError("cannot send a " + type(value).__name__ + ": only plain data crosses")
    if hasattr(type(value), "__next__") and hasattr(type(value), "__iter__"):
        return _encode_iterator(value, d)
    return ["o", type(value).__name__[:100], _short_repr(value)]


def _encode_iterator(value, depth):
    items = []
    for item in value:
        if len(items) >= MAX_ITEMS:
            raise PlainDataError("an iterator with more than " + str(MAX_ITEMS) + " items")
        items.append(encode(item, False, depth))
    return ["g"] + items


def _short_repr(value):
    try:
        text = repr(value)
    except BaseException:
        text = "?"
    return text if isinstance(text, str) and len(text) <= 300 else str(text)[:300] + "..."


def dumps(message):
    return json.dumps(message, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode() + b"\n"


def loads(line):
    """A message (a dict of JSON values) from one line; PlainDataError for anything else."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError, MemoryError):
        raise PlainDataError("not a JSON message") from None
    if type(message) is not dict:
        raise PlainDataError("not a JSON object")
    return message


def decode(obj, depth=0):
    """The plain value an encoded form stands for; PlainDataError on anything malformed."""
    if depth > MAX_DEPTH:
        raise PlainDataError("nested deeper than " + str(MAX_DEPTH))
    kind = type(obj)
    if obj is None or kind is bool or kind is int or kind is float or kind is str:
        return obj
    if kind is not list or not obj or type(obj[0]) is not str:
        raise PlainDataError("malformed value")
    try:
        return _decode_tagged(obj[0], obj[1:], depth + 1)
    except (TypeError, ValueError, OverflowError) as exc:
        raise PlainDataError("malformed " + obj[0] + " value: " + type(exc).__name__) from None


def _decode_tagged(tag, rest, depth):
    if tag in ("l", "t", "s", "f", "g"):
        items = [decode(v, depth) for v in rest]
        convert = {"l": list, "t": tuple, "s": set, "f": frozenset, "g": lambda xs: iter(tuple(xs))}
        return convert[tag](items)
    if tag == "d":
        out = {}
        for pair in rest:
            if type(pair) is not list or len(pair) != 2:
                raise PlainDataError("malformed dict item")
            out[decode(pair[0], depth)] = decode(pair[1], depth)
        return out
    if tag == "I" and len(rest) == 1 and type(rest[0]) is str:
        return int(rest[0], 16)
    if tag == "F" and len(rest) == 1 and rest[0] in ("nan", "inf", "-inf"):
        return float(rest[0])
    if tag == "c" and len(rest) == 2:
        return complex(_number(decode(rest[0], depth)), _number(decode(rest[1], depth)))
    if tag == "b" and len(rest) == 1 and type(rest[0]) is str:
        return bytes.fromhex(rest[0])
    if tag == "r" and len(rest) == 3:
        return range(*[_integer(decode(v, depth)) for v in rest])
    if tag == "o" and len(rest) == 2 and type(rest[0]) is str and type(rest[1]) is str:
        return Opaque(rest[0][:100], rest[1][:400])
    raise PlainDataError("unknown tag " + repr(tag)[:20])


def _number(x):
    if type(x) not in (int, float):
        raise PlainDataError("malformed complex value")
    return x


def _integer(x):
    if type(x) is not int:
        raise PlainDataError("malformed range value")
    return x


class LineReader:
    """Messages from a pipe fd, one per line, each at most ``cap`` bytes."""

    def __init__(self, fd, cap):
        self.fd = fd
        self.cap = cap
        self.buf = b""

    def next_line(self):
        """The next line without its newline, or None at end of file."""
        while True:
            cut = self.buf.find(b"\n")
            if cut >= 0:
                line, self.buf = self.buf[:cut], self.buf[cut + 1 :]
                return line
            if len(self.buf) > self.cap:
                raise PlainDataError("a message longer than " + str(self.cap) + " bytes")
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                return None
            self.buf += chunk


def write_all(fd, data):
    while data:
        data = data[os.write(fd, data) :]


def read_stdin():
    """Everything on stdin (the job the app sent), then stdin pointed at /dev/null so code run
    later in this process cannot read what is left of it."""
    chunks = []
    while True:
        chunk = os.read(0, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return b"".join(chunks)
