# ruff: noqa: F821  (encode, decode, dumps, loads, LineReader, write_all, read_stdin, PlainDataError and confine
# come from plain.py and confine.py, which precede this file in the one ``python -c`` source)
"""o3viz sandbox, judge side: runs the trusted tests in a process of its own and reports verdicts.
Concatenated after plain.py and confine.py into one ``python -c`` source.

The candidate's code never runs here. In this process, ``candidate`` (proxy.py) (and every top-level name the
candidate defines that the tests do not) is a proxy: it sends its arguments as plain data over a
pipe to the candidate's process and returns the plain value that comes back, or raises the
builtin exception it names. So an object with a rigged ``__eq__`` cannot arrive, rebinding
builtins over there changes nothing here, and nothing the candidate made is imported, unpickled or
called. Order of work:

1. capture references to what the harness needs before any test code runs;
2. read the job (marshal, from the app) and the HMAC key from stdin, then point stdin at /dev/null;
3. confine itself (rlimits, Landlock, not dumpable);
4. run the task's trusted context and the test module, then wait for the candidate's hello;
5. run each step in its own try/except and report every event as ``hex(marshal(record)) hmac`` on
   a pipe fd that is neither stdout nor stderr.

A reference job (``trusted_code``: a dataset's canonical solution, used to compute expected
outputs) runs its code here instead, with no candidate process.
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


def _compile_step(step, index):
    label = f"<test {index}>"
    if "left" in step:
        step["left_code"] = _compile(step["left"], label, "eval")
        step["right_code"] = _compile(step["right"], label, "eval")
        msg = step.get("msg")
        step["msg_code"] = _compile(msg, label, "eval") if msg else None
    else:
        step["code"] = _compile(step["src"], label, "eval" if step.get("expr") else "exec")


def _run_step(step, scope, timeout, alarm):
    """Return (status, message, value) for one step; never raises. ``alarm``: the step's SIGALRM."""
    try:
        if alarm:
            _setitimer(_ITIMER_REAL, alarm)
        try:
            if "left_code" in step:
                _check_compare(step, scope)
                return "pass", "", None
            if step.get("expr"):
                return "pass", "", _eval(step["code"], scope)
            _exec(step["code"], scope)
            return "pass", "", None
        finally:
            if alarm:
                _setitimer(_ITIMER_REAL, 0)
    except _StepTimeout as exc:
        return (
            "timeout",
            (exc.args[0] if exc.args else "test exceeded its " + format(timeout, "g") + "s limit"),
            None,
        )
    except CandidateGone as exc:
        return "error", _short(_str(exc)), None
    except _BaseException as exc:
        if _isinstance(exc, _AssertionError):
            try:
                text = _str(exc)
            except _BaseException:
                text = ""
            return "fail", _short(text) or "assertion failed", None
        return "error", _describe(exc), None


def _exec_trusted(source, label, ns, channel, what):
    if not source:
        return True
    try:
        _exec(_compile(source, label, "exec"), ns)
        return True
    except _BaseException as exc:
        channel.emit(k="load", s="error", m=what + " failed to load: " + _describe(exc))
        return False


def _bind_candidate(job, ns, candidate):
    """Proxies for the candidate's names the tests do not define themselves, and the entry point."""
    names = candidate.hello()
    entry = job["entry_point"]
    for name in names:
        # A builtin the code redefines (def abs(x): ...) must not replace the tests' own.
        if name not in ns and not hasattr(builtins, name):
            ns[name] = candidate.proxy(name)
    if entry and entry.isidentifier():
        ns[entry] = candidate.proxy(entry)
    return candidate.proxy("")


def _load(job, channel, candidate):
    """Run the trusted context and the test module; return the step scope, or None after an error."""
    ns = {"__name__": "tests", "__builtins__": builtins}
    trusted = job.get("trusted_code")
    if not _exec_trusted(trusted, "<reference>", ns, channel, "the reference code"):
        return None
    if not _exec_trusted(job.get("context"), "<context>", ns, channel, "the task's context"):
        return None
    if not _exec_trusted(job["test_module"], "<tests>", ns, channel, "the test code"):
        return None
    if candidate is not None:
        try:
            fn = _bind_candidate(job, ns, candidate)
        except CandidateGone as exc:
            channel.emit(k="load", s="error", m=_short(_str(exc)))
            return None
    else:
        fn = _reference_entry(job, ns, channel)
        if fn is None and job["entry_point"]:
            return None
    scope = ns if job["scope"] == "module" else _dict(ns)
    if fn is not None:
        scope[job["candidate_name"]] = fn
    channel.emit(k="load", s="ok", m="")
    return scope


def _reference_entry(job, ns, channel):
    entry = job["entry_point"]
    if not entry:
        return None
    try:
        fn = ns.get(entry) if entry.isidentifier() else _eval(entry, ns)
    except _BaseException:
        fn = None
    if not _callable(fn):
        channel.emit(k="load", s="error", m="the code does not define " + entry + "()")
        return None
    return fn


def _run_job(job, channel, candidate):
    scope = _load(job, channel, candidate)
    if scope is None:
        return
    timeout = job["test_timeout_s"]
    alarm = job.get("alarm_s") or timeout
    for index, step in _enumerate(job["steps"]):
        channel.emit(k="start", i=index)
        try:
            _compile_step(step, index)
        except _BaseException as exc:
            channel.emit(k="end", i=index, s="error", m="test does not compile: " + _describe(exc))
            continue
        status, message, value = _run_step(step, scope, timeout, alarm)
        record = {"k": "end", "i": index, "s": status, "m": message}
        if step.get("expr") and status == "pass":
            if _isinstance(value, _dict) and _type(value) is not _dict:
                value = _dict(value)  # Counter, OrderedDict: compare as the plain dict they are
            record["v"] = _safe_repr(value, _VALUE_CAP)
            record["t"] = _type(value).__name__
        channel.emit(**record)
    channel.emit(k="done")


def _read_job():
    return _loads(read_stdin())


def _on_alarm(signum, frame):
    raise _StepTimeout()


def _main():
    job = _read_job()
    channel = _Channel(job.pop("key"), job["fd"])
    try:
        confine(job)
        _signal.signal(_signal.SIGALRM, _on_alarm)
        sys.dont_write_bytecode = True
    except _BaseException as exc:
        channel.emit(k="load", s="error", m="the sandbox could not restrict itself: " + _describe(exc))
        _exit(3)
    candidate = _Candidate(job) if "req_fd" in job else None
    # A batch ("jobs") runs trusted reference code only (expected outputs), each in its own namespace.
    for index, sub in _enumerate(job.get("jobs") or [job]):
        channel.emit(k="job", j=index)
        sub["test_timeout_s"] = job["test_timeout_s"]
        sub["alarm_s"] = job.get("alarm_s")
        _run_job(sub, channel, candidate)
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except _BaseException:
            pass
    _exit(0)


if __name__ == "__main__":
    _main()
