"""Error types that o3viz raises on bad input; the CLI turns each into one line and exit 2."""

from __future__ import annotations

import re


class O3vizError(Exception):
    """Base class: every message is one line that names the problem and, where one exists, the fix."""


class TraceError(O3vizError, ValueError):
    """A trace file or importable input is malformed, truncated, hostile or of an unknown version.

    The message names the offending field as a dotted path, e.g. ``tokens.logprob: not finite``.
    """


class ModelLoadError(O3vizError, RuntimeError):
    """A model could not be found or loaded; the message names the command that fixes it."""


class UsageError(O3vizError, ValueError):
    """A CLI or API argument is invalid (unknown task id, bad layer list, ...)."""


def one_line(exc: BaseException, limit: int | None = None) -> str:
    """The one way an exception becomes one line of text for a user: its message with whitespace
    collapsed (the type's name when the message is empty), cut to ``limit`` characters.

    >>> one_line(ValueError("bad\\n   value"))
    'bad value'
    >>> one_line(KeyError())
    'KeyError'
    >>> one_line(OSError("x" * 10), limit=4)
    'xxxx'
    """
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if limit is None else text[:limit]


# C0 controls, DEL, C1 controls (ESC, CSI, OSC start sequences) and the bidi overrides that
# reorder what a terminal shows; the second keeps tab, newline and carriage return (tqdm's \r)
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_CONTROL_BUT_LINES = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escape(m: re.Match) -> str:
    return f"\\u{ord(m.group()):04x}"  # the JSON form: a --json line stays valid JSON


def printable(text: str, *, lines: bool = False) -> str:
    """``text`` from a file, safe to print on a terminal: every control character written as an
    escape (``\\u001b``, the form JSON also reads), so a name cannot colour the screen, set the title, or (unless ``lines``,
    which keeps newlines, tabs and carriage returns) forge a line of output.

    >>> printable("a\\x1b[31mred\\nline")
    'a\\\\u001b[31mred\\\\u000aline'
    >>> printable("two\\nlines\\x07", lines=True)
    'two\\nlines\\\\u0007'
    """
    return (_CONTROL_BUT_LINES if lines else _CONTROL).sub(_escape, text)


def parse_option(parse, flag: str, text: str):
    """``parse(text)``, with the option's name in front of its one-line ``UsageError``
    (``--pair-a: unknown setting 'x'``)."""
    try:
        return parse(text)
    except UsageError as exc:
        raise UsageError(f"{flag}: {exc}") from None
