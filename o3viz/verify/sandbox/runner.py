"""o3viz-sandbox-runner: the harness that runs inside the sandbox (started by o3viz/sandbox.py).

It is handed to ``python -c`` as source, so it imports nothing from o3viz and only modules that load
in well under a millisecond. Its order of work is the point:

1. capture references to everything it needs (``os.write``, ``AssertionError``, ``marshal.dumps``,
   ...) before any untrusted code exists, so code that rebinds builtins cannot fool the harness;
2. read the whole job (marshal) and the HMAC key from stdin, then point stdin at /dev/null;
3. restrict itself: rlimits, then Landlock when the job asks for it;
4. define the candidate code, load the test module, and run each step in its own try/except;
5. report every event as a line ``hex(marshal(record)) hex(hmac)`` on a pipe fd that is neither
   stdout nor stderr, so printing a result-looking line forges nothing.

It stays Python 3.8-compatible: the sandbox may run the system interpreter, not the app's.
"""

import _sha256
import _signal
import builtins
import marshal
import os
import sys

# Captured before untrusted code runs: the code may rebind builtins.AssertionError, os.write or
# marshal.dumps, and the harness must keep using the originals.
_write = os.write
_exit = os._exit
_dumps = marshal.dumps
_loads = marshal.loads
_sha = _sha256.sha256
_AssertionError = AssertionError
_BaseException = BaseException
_Exception = Exception
_isinstance = isinstance
_repr = repr
_str = str
_type = type
_len = len
_compile = compile
_exec = exec
_eval = eval
_dict = dict
_enumerate = enumerate
_callable = callable
_setitimer = _signal.setitimer
_ITIMER_REAL = _signal.ITIMER_REAL
_MESSAGE_CAP = 2000
_VALUE_CAP = 200_000
_TRANS_5C = bytes((x ^ 0x5C) for x in range(256))
_TRANS_36 = bytes((x ^ 0x36) for x in range(256))

_OPS = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "is": lambda a, b: a is b,
    "is not": lambda a, b: a is not b,
    "in": lambda a, b: a in b,
    "not in": lambda a, b: a not in b,
}


class _StepTimeout(BaseException):
    """Raised by SIGALRM when one test outlives its own time limit."""


class _Channel:
    """Writes HMAC-SHA256-tagged records to the result fd; the key never leaves this object."""

    def __init__(self, key, fd):
        padded = key.ljust(64, b"\0")
        self._inner = _sha(padded.translate(_TRANS_36))
        self._outer = _sha(padded.translate(_TRANS_5C))
        self._fd = fd
        self._seq = 0

    def emit(self, **record):
        record["n"] = self._seq
        self._seq += 1
        body = _dumps(record, 2)
        inner = self._inner.copy()
        inner.update(body)
        outer = self._outer.copy()
        outer.update(inner.digest())
        line = body.hex().encode() + b" " + outer.hexdigest().encode() + b"\n"
        try:
            while line:
                line = line[_write(self._fd, line) :]
        except _BaseException:
            pass  # the fd was closed by the code under test: missing results become errors


def _short(text, cap=_MESSAGE_CAP):
    return text if _len(text) <= cap else text[:cap] + "...[truncated]"


def _safe_repr(value, cap=300):
    try:
        return _short(_repr(value), cap)
    except _BaseException as exc:
        return f"<repr failed: {_type(exc).__name__}>"


def _describe(exc):
    try:
        text = _str(exc)
    except _BaseException:
        text = "<unprintable>"
    name = _type(exc).__name__
    return _short(name + ": " + text if text else name)


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


def _check_compare(step, scope):
    """Run ``assert left OP right, msg`` and say what both sides were when it fails."""
    left = _eval(step["left_code"], scope)
    right = _eval(step["right_code"], scope)
    if _OPS[step["op"]](left, right):
        return
    shown = "{} {} {}".format(_safe_repr(left), step["op"], _safe_repr(right))
    if step["msg_code"] is not None:
        raise _AssertionError("{} ({})".format(_str(_eval(step["msg_code"], scope)), shown))
    raise _AssertionError("assertion failed: " + shown)


def _run_step(step, scope, timeout):
    """Return (status, message, value) for one step; never raises."""
    try:
        if timeout:
            _setitimer(_ITIMER_REAL, timeout)
        try:
            if "left_code" in step:
                _check_compare(step, scope)
                return "pass", "", None
            if step.get("expr"):
                return "pass", "", _eval(step["code"], scope)
            _exec(step["code"], scope)
            return "pass", "", None
        finally:
            if timeout:
                _setitimer(_ITIMER_REAL, 0)
    except _StepTimeout:
        return "timeout", f"test exceeded its {timeout:g}s limit", None
    except _BaseException as exc:
        if _isinstance(exc, _AssertionError):
            try:
                text = _str(exc)
            except _BaseException:
                text = ""
            return "fail", _short(text) or "assertion failed", None
        return "error", _describe(exc), None


def _compile_step(step, index):
    label = f"<test {index}>"
    if "left" in step:
        step["left_code"] = _compile(step["left"], label, "eval")
        step["right_code"] = _compile(step["right"], label, "eval")
        msg = step.get("msg")
        step["msg_code"] = _compile(msg, label, "eval") if msg else None
    else:
        step["code"] = _compile(step["src"], label, "eval" if step.get("expr") else "exec")


def _load(job, channel):
    """Define the candidate and the test module; return the step scope, or None after an error."""
    ns = {"__name__": "candidate", "__builtins__": builtins}
    try:
        _exec(_compile(job["code"], "<candidate>", "exec"), ns)
    except _BaseException as exc:
        channel.emit(k="load", s="error", m="the code failed to run: " + _describe(exc))
        return None
    try:
        if job["test_module"]:
            _exec(_compile(job["test_module"], "<tests>", "exec"), ns)
    except _BaseException as exc:
        channel.emit(k="load", s="error", m="the test code failed to load: " + _describe(exc))
        return None
    scope = ns if job["scope"] == "module" else _dict(ns)
    entry = job["entry_point"]
    if entry:
        try:  # a name, or an expression such as LeetCode's Solution().twoSum
            fn = ns.get(entry) if entry.isidentifier() else _eval(entry, ns)
        except _BaseException:
            fn = None
        if not _callable(fn):
            channel.emit(k="load", s="error", m=f"the code does not define {entry}()")
            return None
        scope[job["candidate_name"]] = fn
    channel.emit(k="load", s="ok", m="")
    return scope


def _run_job(job, channel):
    scope = _load(job, channel)
    if scope is None:
        return
    timeout = job["test_timeout_s"]
    for index, step in _enumerate(job["steps"]):
        channel.emit(k="start", i=index)
        try:
            _compile_step(step, index)
        except _BaseException as exc:
            channel.emit(k="end", i=index, s="error", m="test does not compile: " + _describe(exc))
            continue
        status, message, value = _run_step(step, scope, timeout)
        record = {"k": "end", "i": index, "s": status, "m": message}
        if step.get("expr") and status == "pass":
            if _isinstance(value, _dict) and _type(value) is not _dict:
                value = _dict(value)  # Counter, OrderedDict: compare as the plain dict they are
            record["v"] = _safe_repr(value, _VALUE_CAP)
            record["t"] = _type(value).__name__
        channel.emit(**record)
    channel.emit(k="done")


def _read_job():
    chunks = []
    while True:
        chunk = os.read(0, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return _loads(b"".join(chunks))


def _on_alarm(signum, frame):
    raise _StepTimeout()


def _main():
    job = _read_job()
    channel = _Channel(job.pop("key"), job["fd"])
    try:
        _apply_rlimits(job)
        if job["landlock"]:
            _apply_landlock(job["read_paths"], job["write_paths"], job["dev_paths"])
        _signal.signal(_signal.SIGALRM, _on_alarm)
        sys.dont_write_bytecode = True
    except _BaseException as exc:
        channel.emit(k="load", s="error", m="the sandbox could not restrict itself: " + _describe(exc))
        _exit(3)
    # A batch ("jobs") runs trusted reference code only (expected outputs), each in its own namespace.
    for index, sub in _enumerate(job.get("jobs") or [job]):
        channel.emit(k="job", j=index)
        sub["test_timeout_s"] = job["test_timeout_s"]
        _run_job(sub, channel)
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except _BaseException:
            pass
    # Skip interpreter shutdown: threads or atexit hooks the code left behind must not run on.
    _exit(0)


if __name__ == "__main__":
    _main()
