"""Error types that o3viz raises on bad input; the CLI turns each into one line and exit 2."""

from __future__ import annotations


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
