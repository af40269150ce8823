"""Measuring and removing what sandboxed code left on disk, without recursion and without paths.

Sandboxed code can build a directory chain thousands of levels deep: ``shutil.rmtree`` then raises
``RecursionError`` and path-based calls fail with ``ENAMETOOLONG``. Both walks here use directory
file descriptors and an explicit stack. ``remove_tree`` keeps at most ``_MAX_OPEN`` descriptors
open: a directory deeper than that is first moved up to the top of the tree (a rename), so any
depth is removed in linear time. ``tree_usage`` stops counting once it passes a cap.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass

_MAX_OPEN = 64  # directory descriptors held at once while removing
_MAX_WALK_DEPTH = 4096  # tree_usage counts a deeper tree as over its entry cap
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass
class Usage:
    """What a tree holds: bytes allocated on disk, entries, and the deepest level seen."""

    bytes: int = 0
    entries: int = 0
    depth: int = 0


def _open_dir(name: str, dir_fd: int | None) -> int:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except PermissionError:
        os.chmod(name, 0o700, dir_fd=dir_fd)  # the code may have made its folders unreadable
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)


def _listing(fd: int) -> list[tuple[str, bool]]:
    with os.scandir(fd) as it:
        return [(e.name, e.is_dir(follow_symlinks=False)) for e in it]


def remove_tree(path: str | os.PathLike) -> int:
    """Remove ``path`` and everything under it, at any depth; return how many entries could not be
    removed (0 when all went). Never raises for what the tree holds."""
    try:
        root = _open_dir(os.fspath(path), None)
    except FileNotFoundError:
        return 0
    except OSError:
        return 1
    left, moved = 0, 0
    # Each frame: (fd, name in parent, entries still to visit).
    stack: list[tuple[int, str, list[tuple[str, bool]]]] = [(root, "", _safe_listing(root))]
    while stack:
        fd, name, todo = stack[-1]
        if todo:
            child, is_dir = todo.pop()
            if not is_dir:
                left += _unlink(child, fd)
            elif len(stack) >= _MAX_OPEN:
                moved += 1  # too deep to descend with a descriptor: lift it to the top, do it later
                try:
                    os.rename(child, f".o3viz-lifted-{moved}", src_dir_fd=fd, dst_dir_fd=root)
                    stack[0][2].append((f".o3viz-lifted-{moved}", True))
                except OSError:
                    left += 1
            else:
                try:
                    sub = _open_dir(child, fd)
                    stack.append((sub, child, _safe_listing(sub)))
                except OSError:
                    left += 1
            continue
        stack.pop()
        os.close(fd)
        if stack:
            left += _rmdir(name, stack[-1][0])
    try:
        os.rmdir(path)
    except OSError:
        left += 1
    return left


def _safe_listing(fd: int) -> list[tuple[str, bool]]:
    try:
        return _listing(fd)
    except OSError:
        return []


def _unlink(name: str, dir_fd: int) -> int:
    try:
        os.unlink(name, dir_fd=dir_fd)
        return 0
    except FileNotFoundError:
        return 0
    except OSError:
        return 1


def _rmdir(name: str, dir_fd: int) -> int:
    try:
        os.rmdir(name, dir_fd=dir_fd)
        return 0
    except OSError:
        return 1


def tree_usage(path: str | os.PathLike, *, entry_cap: int = 200_000) -> Usage:
    """Disk use under ``path`` (allocated blocks, hard links counted once), without following links.
    Stops early once ``entries`` passes ``entry_cap``: the caller treats that as over the limit."""
    usage = Usage()
    seen: set[tuple[int, int]] = set()
    try:
        root = os.open(os.fspath(path), _DIR_FLAGS)
    except OSError:
        return usage
    stack = [(root, _safe_listing(root))]
    try:
        while stack and usage.entries <= entry_cap:
            fd, todo = stack[-1]
            if not todo:
                os.close(stack.pop()[0])
                continue
            name, is_dir = todo.pop()
            usage.entries += 1
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except OSError:
                continue
            if (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                usage.bytes += st.st_blocks * 512
            if is_dir and stat.S_ISDIR(st.st_mode):
                try:
                    sub = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except OSError:
                    continue
                stack.append((sub, _safe_listing(sub)))
                usage.depth = max(usage.depth, len(stack) - 1)
                if len(stack) > _MAX_WALK_DEPTH:  # deeper than any real use: count it as over
                    usage.entries = entry_cap + 1
    finally:
        for fd, _ in stack:
            os.close(fd)
    return usage


def owned_entries(folders: tuple[str, ...], uid: int) -> list[str]:
    """Top-level entries of shared folders (/tmp, /dev/shm) owned by ``uid``: what a run's fresh uid
    left outside its own folder."""
    found = []
    for folder in folders:
        try:
            with os.scandir(folder) as it:
                for e in it:
                    try:
                        if e.stat(follow_symlinks=False).st_uid == uid:
                            found.append(e.path)
                    except OSError:
                        continue
        except OSError:
            continue
    return found


def remove_path(path: str) -> int:
    """Remove a file, link or folder tree; return entries left (0 when gone)."""
    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):
            return remove_tree(path)
        os.unlink(path)
    except FileNotFoundError:
        return 0
    except OSError:
        return 1
    return 0


def disk_watch(
    work: str, cap_mb: int, shared: tuple[tuple[str, ...], int] | None = None
) -> Callable[[], str]:
    """The disk cap outside bubblewrap: ``work`` (and, with ``shared`` = (folders, uid), what that uid
    owns in those folders) measured on each call; a reason to stop, else ""."""
    cap = cap_mb << 20

    def check() -> str:
        used = tree_usage(work)
        total, entries = used.bytes, used.entries
        for path in owned_entries(*shared) if shared else ():
            extra = tree_usage(path) if os.path.isdir(path) else None
            total += extra.bytes if extra else _size(path)
            entries += extra.entries + 1 if extra else 1
        if total > cap or entries > 200_000:
            return f"the code used more than the disk limit of {cap_mb} MB (or 200,000 files)"
        return ""

    return check


def _size(path: str) -> int:
    try:
        return os.lstat(path).st_blocks * 512
    except OSError:
        return 0
