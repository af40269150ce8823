"""The one place o3viz reads input files and writes output files: bounded, never blocking, atomic.

- ``read_bounded(name, limit)`` reads a regular file, or ``-`` for stdin, and refuses anything else
  in one line: a FIFO (it would block), a device such as ``/dev/zero`` (endless), a file on
  ``/proc`` or ``/sys`` (sizes lie, reads fail), a folder. The size limit is enforced while
  reading, so a file that grows, or stdin, stops at ``limit`` + 1 bytes.
- ``write_atomic(path, data, overwrite=False)`` writes a temp file in the target's folder, then
  makes it the final name in one step: ``os.replace`` to overwrite, else a hard link, which fails
  if the name exists. Of two writers racing for one name without ``overwrite``, exactly one wins
  and the other gets ``OutputExistsError`` (one line); nothing is silently replaced.
- ``check_output(path, overwrite)`` says early (before slow work) whether ``write_atomic`` can
  succeed: not a folder, not on /proc or /sys, not existing unless ``overwrite``, and with
  ``overwrite`` only a regular file is replaced (never a symlink, a device node or a FIFO). The temp
  file is created with ``O_EXCL`` under a random name, so a planted ``.NAME.tmp`` link is never
  followed.

Every problem is an ``O3vizError`` (the CLI prints one line and exits 2).
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import BinaryIO

from o3viz.errors import O3vizError, TraceError

_CHUNK = 1 << 20
_PSEUDO_FS = ("/proc", "/sys")


class OutputExistsError(O3vizError, FileExistsError):
    """The output name exists (or another writer took it first) and overwriting was not asked for."""


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _pseudo_fs(st: os.stat_result) -> str | None:
    """``/proc`` or ``/sys`` when ``st`` lies on one of them (their files' sizes are not real)."""
    for root in _PSEUDO_FS:
        try:
            if os.stat(root).st_dev == st.st_dev:
                return root
        except OSError:
            continue
    return None


def _read_capped(fd: int, limit: int, name: str, what: str = "the limit") -> bytes:
    chunks, total = [], 0
    while True:
        chunk = os.read(fd, min(_CHUNK, limit + 1 - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise TraceError(f"{name}: more than {what} of {limit} bytes")


def _read_stdin(limit: int) -> bytes:
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, ValueError, OSError):  # replaced by a StringIO (tests, notebooks)
        data = sys.stdin.read(limit + 1)
        data = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
        if len(data) > limit:
            raise TraceError(f"stdin: more than the limit of {limit} bytes") from None
        return data
    try:
        return _read_capped(fd, limit, "stdin")
    except OSError as exc:
        raise TraceError(f"stdin: cannot read ({exc.strerror or exc})") from None


def open_regular(
    name: str | os.PathLike, limit: int, what: str = "the limit", *, follow_symlinks: bool = True
) -> BinaryIO:
    """A regular file opened for reading (blocking), after the checks ``read_bounded`` makes: not a
    FIFO, device, folder or a file on /proc or /sys, and at most ``limit`` bytes; for readers that
    stream it (``o3viz.trace.bounded.read_lines``). Else one-line ``TraceError``."""
    # O_NONBLOCK: opening a FIFO must not wait for a writer. O_NOCTTY: a terminal stays ours.
    flags = (
        os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC | (0 if follow_symlinks else os.O_NOFOLLOW)
    )
    try:
        fd = os.open(name, flags)
    except FileNotFoundError:
        raise TraceError(f"{name}: no such file") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow_symlinks:
            raise TraceError(f"{name}: is a symbolic link, not a regular file; not read") from None
        raise TraceError(f"{name}: cannot open ({exc.strerror or exc})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise TraceError(f"{name}: cannot read {_kind(st.st_mode)}, only regular files")
        root = _pseudo_fs(st)
        if root:
            raise TraceError(f"{name}: cannot read a file on {root}, only regular files")
        if st.st_size > limit:
            raise TraceError(f"{name}: {st.st_size} bytes exceeds {what} of {limit} bytes")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except OSError as exc:
        os.close(fd)
        raise TraceError(f"{name}: cannot read ({exc.strerror or exc})") from None
    except TraceError:
        os.close(fd)
        raise


def read_bounded(
    name: str | os.PathLike, limit: int, what: str = "the limit", *, follow_symlinks: bool = True
) -> bytes:
    """The bytes of a regular file (``-``: stdin), at most ``limit``; else one-line ``TraceError``.
    ``follow_symlinks=False`` (the store's own files, which are never links) refuses a symlink."""
    if str(name) == "-":
        return _read_stdin(limit)
    with open_regular(name, limit, what, follow_symlinks=follow_symlinks) as f:
        try:
            return _read_capped(f.fileno(), limit, str(name), what)
        except OSError as exc:
            raise TraceError(f"{name}: cannot read ({exc.strerror or exc})") from None


def check_output(path: str | os.PathLike, overwrite: bool, *, what: str = "--out") -> Path:
    """Refuse, in one line, an output ``write_atomic`` could not create; checked before slow work."""
    path = Path(path)
    if path.is_dir():
        raise O3vizError(f"{what}: {path} is a folder; give a file name")
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    try:
        root = _pseudo_fs(os.stat(parent))
    except OSError as exc:
        raise O3vizError(f"{what}: cannot use {path} ({exc.strerror or exc})") from None
    if root:
        raise O3vizError(f"{what}: {path} is on {root}, where files cannot be written; pick another folder")
    try:
        st = os.lstat(path)
    except OSError:
        return path  # nothing there (or nothing we can see): the write itself decides
    if not overwrite:
        raise OutputExistsError(f"{what}: {path} exists; pass --overwrite to replace it")
    if not stat.S_ISREG(st.st_mode):  # --overwrite replaces a file, never a link, device or pipe
        kind = "a symbolic link" if stat.S_ISLNK(st.st_mode) else _kind(st.st_mode)
        raise O3vizError(f"{what}: {path} is {kind}; only a regular file is replaced")
    return path


def _write_error(path: Path, doing: str, exc: OSError) -> O3vizError:
    """One line for a failed write; keeps ``errno`` so callers can tell a full disk apart."""
    err = O3vizError(f"{path}: {doing} ({exc.strerror or exc})")
    err.errno = exc.errno
    return err


def write_atomic(
    path: str | os.PathLike, data: bytes, *, overwrite: bool = False, durable: bool = True
) -> Path:
    """Write ``data`` to ``path`` atomically (the one atomic writer: trace files, the store's files,
    exports): a temp file in the same folder, fsync, then a rename, so a reader sees the whole file
    or none. Without ``overwrite``, claim the name exclusively. Without ``durable`` the fsync is
    skipped (bulk imports): a killed process still leaves whole files."""
    path = check_output(path, overwrite, what=str(path))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise _write_error(path, "cannot write there", exc) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            if durable:
                os.fsync(f.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; a saved file is an ordinary file
        _publish(tmp, path, overwrite)
    except O3vizError:
        raise  # OutputExistsError is also an OSError: keep its own message
    except OSError as exc:
        raise _write_error(path, "cannot write", exc) from None
    finally:
        Path(tmp).unlink(missing_ok=True)
    return path


def _publish(tmp: str, path: Path, overwrite: bool) -> None:
    if overwrite:
        if path.is_dir():
            raise O3vizError(f"{path} is a folder; give a file name")
        os.replace(tmp, path)
        return
    try:
        os.link(tmp, path)  # fails with EEXIST if the name exists: the refusal is atomic
    except FileExistsError:
        raise OutputExistsError(f"{path} exists (another writer created it); nothing was replaced") from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
            raise
        _publish_without_links(tmp, path)


def _publish_without_links(tmp: str, path: Path) -> None:
    """For file systems without hard links: claim the name with O_EXCL, then rename over it."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        raise OutputExistsError(f"{path} exists (another writer created it); nothing was replaced") from None
    os.replace(tmp, path)
