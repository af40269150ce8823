"""Confinement every sandboxed process applies to itself before any untrusted code exists:
rlimits, Landlock when asked, and (for the judge) PR_SET_DUMPABLE=0 so a same-uid process cannot
read its memory through /proc or ptrace. Part of the ``python -c`` source (see inside/__init__)."""

import _signal
import os


def _prctl(option, value):
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl failed")


def _apply_rlimits(job):
    import resource

    def cap(which, value, slack=0):
        soft, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard - slack)
        resource.setrlimit(which, (value, value + slack))

    # The soft CPU limit sends SIGXCPU a second before the hard one's SIGKILL, so the parent can
    # tell "CPU time ran out" from other kills.
    cap(resource.RLIMIT_CPU, job["cpu_s"], slack=1)
    cap(resource.RLIMIT_AS, job["memory_bytes"])
    cap(resource.RLIMIT_FSIZE, job["file_size_bytes"])
    cap(resource.RLIMIT_NPROC, job["max_procs"])
    cap(resource.RLIMIT_NOFILE, job["max_open_files"])
    cap(resource.RLIMIT_CORE, 0)
    # Writing past RLIMIT_FSIZE then fails with EFBIG instead of killing the process unreported.
    _signal.signal(_signal.SIGXFSZ, _signal.SIG_IGN)


def _apply_landlock(read_paths, write_paths, dev_paths):
    """Allow reading read_paths, everything under write_paths, nothing else; deny TCP and signals."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    # landlock_create_ruleset/add_rule/restrict_self are 444-446 on every architecture.
    abi = libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    if abi < 1:
        raise OSError(ctypes.get_errno(), "Landlock is not available")
    fs_all = (1 << 13) - 1 | (1 << 13 if abi >= 2 else 0) | (1 << 14 if abi >= 3 else 0)
    fs_all |= 1 << 15 if abi >= 5 else 0
    file_only = 1 | 2 | 4 | (1 << 14 if abi >= 3 else 0) | (1 << 15 if abi >= 5 else 0)

    class RulesetAttr(ctypes.Structure):
        _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]

    class PathBeneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

    # Handling TCP bind/connect (ABI 4) with no rules denies them; scoping (ABI 6) denies signals
    # and abstract unix sockets towards processes outside this sandbox.
    attr = RulesetAttr(fs_all, 3 if abi >= 4 else 0, 3 if abi >= 6 else 0)
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    ruleset = libc.syscall(444, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    rules = [(p, 1 | 4 | 8) for p in read_paths] + [(p, fs_all) for p in write_paths]
    rules += [(p, 2 | 4) for p in dev_paths]
    for path, access in rules:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue  # a path this system lacks needs no rule
        if not os.path.isdir(path):
            access &= file_only
        rule = PathBeneath(access, fd)
        done = libc.syscall(445, ruleset, 1, ctypes.byref(rule), ctypes.c_uint32(0))
        os.close(fd)
        if done < 0:
            raise OSError(ctypes.get_errno(), "landlock_add_rule failed for " + path)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS, required by restrict_self
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    if libc.syscall(446, ruleset, ctypes.c_uint32(0)) < 0:
        raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    os.close(ruleset)


def confine(job):
    """Apply the job's limits to this process; raises on failure (the caller reports it)."""
    _apply_rlimits(job)
    if job.get("nondumpable"):
        _prctl(4, 0)  # PR_SET_DUMPABLE: no /proc/<pid>/mem, no ptrace by the same uid
    if job["landlock"]:
        _apply_landlock(job["read_paths"], job["write_paths"], job["dev_paths"])
