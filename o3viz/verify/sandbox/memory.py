"""The memory bound of one whole verdict: every process of both sides together, anonymous and
shared memory, memfd and SysV segments included. RLIMIT_AS bounds one process's address space
only: the pages of a memfd that is never mapped, a detached SysV segment, or four forked children
each under the limit all escape it (issue 23: 3.2 GB through memfds, 3.7 GB through forks).

- ``cgroup2`` / ``cgroup1``: a fresh leaf cgroup with the memory controller, its limit the
  verdict's cap and no swap. Each process joins it before it runs anything (a ``/bin/sh`` prefix
  writes its own pid into ``cgroup.procs``, then execs), so everything it forks is charged there,
  and so are memfd, tmpfs and SysV pages. Past the cap the kernel's OOM killer acts inside the leaf.
- ``watchdog`` (no writable memory cgroup here): every 0.05 s the app sums, over the run's
  processes (its fresh uids as root; else the sessions it started and their descendants), the
  proportional anonymous and shared memory (``smaps_rollup``), the memfd and /dev/shm files they
  hold open, and the host's SysV segments they created. Past the cap the run stops and every
  member is killed.

Either way the kill reaches every member, and SysV segments the run created (they outlive their
creator) are removed afterwards.
"""

from __future__ import annotations

import ctypes
import os
import secrets
import signal
import time
from collections import defaultdict
from dataclasses import dataclass, field

GUARDS = ("auto", "cgroup", "watchdog")
_LEAF_PREFIX = "o3viz-sbx-"
_SHMEM_LINKS = ("/memfd:", "/dev/shm/", "/SYSV")  # fd targets whose pages are RAM
_JOIN = 'echo $$ > "$0" && exec "$@"'  # argv[1] is the leaf's cgroup.procs, the rest the command
_KB = 1024


def over_message(limit: int) -> str:
    return (
        f"the code used more than the memory limit of {limit >> 20} MB "
        "(all its processes together, shared memory included)"
    )


def _read(path: str) -> str:
    with open(path, encoding="ascii", errors="replace") as fh:
        return fh.read()


def _write(path: str, value: str) -> None:
    with open(path, "w", encoding="ascii") as fh:
        fh.write(value)


def _cgroup_dir(version: int) -> str | None:
    """This process's cgroup folder in the v2 hierarchy, or the v1 one holding the memory controller."""
    try:
        lines = [line.split(":", 2) for line in _read("/proc/self/cgroup").splitlines()]
        mounts = [line.split() for line in _read("/proc/self/mountinfo").splitlines()]
    except OSError:
        return None
    own = next(
        (
            p
            for h, c, p in lines
            if (version == 2 and h == "0" and c == "") or (version == 1 and "memory" in c.split(","))
        ),
        None,
    )
    for fields in mounts:
        sep = fields.index("-") if "-" in fields else -1
        if own is None or sep < 0 or len(fields) < sep + 4:
            continue
        fstype, options = fields[sep + 1], fields[sep + 3].split(",")
        if fstype != ("cgroup2" if version == 2 else "cgroup") or (version == 1 and "memory" not in options):
            continue
        root, point = fields[3].rstrip("/"), fields[4]
        if own == root or own.startswith(root + "/"):
            return point + own[len(root) :]
    return None


def _sweep_stale(parent: str) -> None:
    """Remove the empty leaves under ``parent`` whose host process is gone (killed -9 mid-verdict,
    it never reached ``close``). A leaf is named for the pid that made it."""
    try:
        names = [e.name for e in os.scandir(parent) if e.name.startswith(_LEAF_PREFIX) and e.is_dir()]
    except OSError:
        return
    for name in names:
        pid = name[len(_LEAF_PREFIX) :].partition("-")[0]
        if not pid.isdigit() or int(pid) == os.getpid() or _alive(int(pid)):
            continue
        try:
            os.rmdir(os.path.join(parent, name))  # fails while a process is still inside: kept
        except OSError:
            continue


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, not ours to signal
    return True


def _make_leaf(parent: str, settings: list[tuple[str, str, bool]]) -> str | None:
    """A fresh child cgroup of ``parent`` with ``settings`` (file, value, required) written; leaves
    that a dead host process left behind go first."""
    _sweep_stale(parent)
    leaf = os.path.join(parent, f"{_LEAF_PREFIX}{os.getpid()}-{secrets.token_hex(6)}")
    try:
        os.mkdir(leaf)
    except OSError:
        return None
    try:
        for name, value, required in settings:
            try:
                _write(os.path.join(leaf, name), value)
            except OSError:
                if required:
                    raise
        return leaf
    except OSError:
        _rmdir(leaf)
        return None


def _cgroup_leaf(limit: int) -> tuple[str, str] | None:
    """(kind, leaf folder) for a memory-limited leaf cgroup, or None where none can be made."""
    own = _cgroup_dir(2)
    if own:
        settings = [("memory.max", str(limit), True), ("memory.swap.max", "0", False)]
        settings.append(("memory.oom.group", "1", False))  # one OOM kill takes the whole verdict
        # A v2 cgroup with processes cannot enable controllers for children: a sibling leaf then.
        for parent in (own, os.path.dirname(own)):
            try:
                enabled = "memory" in _read(os.path.join(parent, "cgroup.subtree_control")).split()
            except OSError:
                enabled = False
            leaf = _make_leaf(parent, settings) if enabled else None
            if leaf:
                return "cgroup2", leaf
    own = _cgroup_dir(1)
    if own:
        settings = [("memory.limit_in_bytes", str(limit), True)]
        settings.append(("memory.memsw.limit_in_bytes", str(limit), False))  # no swapping out of it
        leaf = _make_leaf(own, settings)
        if leaf:
            return "cgroup1", leaf
    return None


def _rmdir(path: str, wait_s: float = 1.0) -> bool:
    """Remove an empty cgroup; its last processes may take a moment to leave."""
    end = time.monotonic() + wait_s
    while True:
        try:
            os.rmdir(path)
            return True
        except FileNotFoundError:
            return True
        except OSError:
            if time.monotonic() >= end:
                return False
            time.sleep(0.02)


def _field_kb(text: str, names: tuple[str, ...]) -> int | None:
    found = None
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        if key in names:
            found = (found or 0) + int(rest.split()[0]) * _KB
    return found


def _process_bytes(pid: int) -> int:
    """Anonymous + shared memory of one process, proportional (a forked copy counts once)."""
    try:
        got = _field_kb(_read(f"/proc/{pid}/smaps_rollup"), ("Pss_Anon", "Pss_Shmem"))
        if got is not None:
            return got
    except OSError:
        pass  # not dumpable (the judge), or an old kernel: the plain counts, which never undercount
    try:
        return _field_kb(_read(f"/proc/{pid}/status"), ("RssAnon", "RssShmem")) or 0
    except OSError:
        return 0


def _open_shmem(pid: int, into: dict[tuple[int, int], int]) -> None:
    """memfd and /dev/shm files the process holds open, by inode: their pages need no mapping."""
    base = f"/proc/{pid}/fd"
    try:
        names = os.listdir(base)
    except OSError:
        return
    for name in names:
        path = os.path.join(base, name)
        try:
            if os.readlink(path).startswith(_SHMEM_LINKS):
                st = os.stat(path)
                into[(st.st_dev, st.st_ino)] = st.st_blocks * 512
        except OSError:
            continue


def sysv_segments() -> list[dict[str, int]]:
    """The host's SysV shared-memory segments (this IPC namespace's), as /proc/sysvipc/shm says."""
    try:
        lines = _read("/proc/sysvipc/shm").splitlines()
    except OSError:
        return []
    if not lines:
        return []
    head = lines[0].split()
    rows = []
    for line in lines[1:]:
        values = line.split()
        if len(values) == len(head):
            rows.append({k: int(v) for k, v in zip(head, values, strict=True) if v.lstrip("-").isdigit()})
    return rows


def _remove_sysv(shmid: int) -> bool:
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.shmctl(ctypes.c_int(shmid), ctypes.c_int(0), None) == 0  # IPC_RMID


@dataclass
class MemoryGuard:
    """The memory bound of one verdict: a leaf cgroup, or the watchdog (see the module docstring)."""

    kind: str  # "cgroup2", "cgroup1" or "watchdog"
    limit: int  # bytes, all the verdict's processes together
    uids: frozenset[int] = frozenset()  # the run's fresh uids (root only)
    leaf: str = ""
    roots: set[int] = field(default_factory=set)  # the pids the app started
    seen: set[int] = field(default_factory=set)  # every member pid seen (whose SysV segments go)
    peak: int = 0  # the most the watchdog measured, bytes
    over: str = ""

    def prefix(self) -> list[str]:
        """What goes before a process's argv so that it joins the leaf before running anything."""
        return ["/bin/sh", "-c", _JOIN, os.path.join(self.leaf, "cgroup.procs")] if self.leaf else []

    def check(self) -> str:
        """Called every 0.05 s while the run goes on: a reason to stop, else ""."""
        if self.leaf:
            self.seen |= self._cgroup_pids()
            if not self.over and self._oom_kills():
                self.over = over_message(self.limit)
            return self.over
        pids = self._members()
        self.seen |= pids
        used = self._usage(pids)
        self.peak = max(self.peak, used)
        if used > self.limit and not self.over:
            self.over = over_message(self.limit)
        return self.over

    def _cgroup_pids(self) -> set[int]:
        try:
            return {int(p) for p in _read(os.path.join(self.leaf, "cgroup.procs")).split()}
        except (OSError, ValueError):
            return set()

    def _oom_kills(self) -> int:
        name = "memory.events" if self.kind == "cgroup2" else "memory.oom_control"
        try:
            for line in _read(os.path.join(self.leaf, name)).splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def cgroup_peak(self) -> int:
        name = "memory.peak" if self.kind == "cgroup2" else "memory.max_usage_in_bytes"
        try:
            return int(_read(os.path.join(self.leaf, name)).split()[0])
        except (OSError, ValueError, IndexError):
            return 0

    def _members(self) -> set[int]:
        """The run's processes now: its uids, the sessions it started, and their descendants."""
        found: set[int] = set()
        children: dict[int, list[int]] = defaultdict(list)
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as fh:
                    stat = fh.read()
                uid = entry.stat().st_uid
            except OSError:
                continue
            pid, rest = int(entry.name), stat[stat.rfind(b")") + 2 :].split()
            ppid, session = int(rest[1]), int(rest[3])
            children[ppid].append(pid)
            if uid in self.uids or pid in self.roots or session in self.roots:
                found.add(pid)
        stack = list(found)
        while stack:
            for child in children.get(stack.pop(), ()):
                if child not in found:
                    found.add(child)
                    stack.append(child)
        return found

    def _usage(self, pids: set[int]) -> int:
        files: dict[tuple[int, int], int] = {}
        total = 0
        for pid in pids:
            total += _process_bytes(pid)
            _open_shmem(pid, files)
        # A held-and-mapped memfd counts twice (its file and its mapped pages): never less.
        return total + sum(files.values()) + sum(s.get("rss", s.get("size", 0)) for s in self._segments())

    def _segments(self) -> list[dict[str, int]]:
        me = os.geteuid()
        return [
            s
            for s in sysv_segments()
            if s.get("cuid") in self.uids or (s.get("cpid") in self.seen and s.get("cuid") == me != 0)
        ]

    def kill(self) -> None:
        """SIGKILL every member, a few times over (one may fork while we look)."""
        for _ in range(5):
            pids = self._cgroup_pids() if self.leaf else (self._members() if self.roots else set())
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    continue
            if not pids:
                return

    def close(self) -> int:
        """After the run: kill what is left, remove the run's SysV segments and the leaf; returns
        how many of those could not be removed."""
        self.kill()
        left = sum(not _remove_sysv(s["shmid"]) for s in self._segments() if "shmid" in s)
        if self.leaf and not _rmdir(self.leaf):
            left += 1
        return left


def open_guard(limit: int, want: str, uids: frozenset[int], can_join: bool) -> MemoryGuard:
    """The best memory bound this machine allows (``want``: auto, cgroup or watchdog).
    ``can_join``: whether a process can run the join prefix before it drops to its uid."""
    if want not in GUARDS:
        raise ValueError(f"memory guard {want!r}: use one of {', '.join(GUARDS)}")
    made = _cgroup_leaf(limit) if want != "watchdog" and can_join else None
    if made:
        return MemoryGuard(made[0], limit, uids, leaf=made[1])
    if want == "cgroup":
        raise ValueError("no writable memory cgroup on this machine (v1 or v2); use memory_guard='auto'")
    return MemoryGuard("watchdog", limit, uids)
