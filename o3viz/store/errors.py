"""How the trace store fails: one-line ``StoreError``s, a full disk named as such."""

from __future__ import annotations

import contextlib
import errno
import sqlite3
from pathlib import Path

from o3viz.errors import O3vizError, one_line

_FULL = (errno.ENOSPC, errno.EDQUOT)


class StoreError(O3vizError):
    """The store cannot do what was asked (newer schema, full disk, unreadable folder)."""


def disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` says the disk (or the user's quota) is full."""
    if isinstance(exc, OSError | O3vizError) and getattr(exc, "errno", None) in _FULL:
        return True
    return isinstance(exc, sqlite3.DatabaseError) and "full" in str(exc).lower()


@contextlib.contextmanager
def guard(root: Path, doing: str):
    """Turn disk and database failures of the store at ``root`` into one-line ``StoreError``s."""
    try:
        yield
    except StoreError:
        raise
    except (OSError, sqlite3.Error, O3vizError) as exc:
        if disk_full(exc):
            full = StoreError(
                f"no space left on the disk of the trace store ({root}) while {doing}; "
                "free some space or set O3VIZ_HOME to a folder on another disk"
            )
            full.fatal = True  # a dataset import stops at once instead of failing every record
            raise full from None
        detail = one_line(exc)
        raise StoreError(f"trace store {root}: {doing} failed ({detail})") from None
