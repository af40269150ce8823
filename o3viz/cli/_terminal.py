"""What the CLI prints reaches a terminal, and much of it came from files (member names, model,
dataset and labeller names): ``escaped_output`` puts a filter on stdout and stderr for a command's
run that writes every control character but newline, tab and carriage return as an escape
(``o3viz.errors.printable``), so no ESC or OSC sequence from a file reaches the terminal raw.
Where a file's text could forge a line, the printing code escapes newlines too (``printable``).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from o3viz.errors import printable


class EscapingStream:
    """A text stream that escapes control characters in what is written to it (the rest, such as
    ``buffer`` and ``fileno``, is the wrapped stream's)."""

    def __init__(self, raw: TextIO):
        self._raw = raw

    def write(self, text: str) -> int:
        self._raw.write(printable(text, lines=True))
        return len(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str):
        return getattr(self._raw, name)


@contextmanager
def escaped_output() -> Iterator[None]:
    """``sys.stdout`` and ``sys.stderr`` escaped for the block, restored after it."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = EscapingStream(out), EscapingStream(err)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err
