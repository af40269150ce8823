# ruff: noqa: F821  (encode, decode, dumps, loads, LineReader, write_all, read_stdin, PlainDataError and confine
# come from plain.py and confine.py, which precede this file in the one ``python -c`` source)
"""o3viz sandbox, candidate side: runs the untrusted code in a process of its own and answers the
judge's calls. Concatenated after plain.py and confine.py into one ``python -c`` source.

1. read the job (marshal, from the app) from stdin, then point stdin at /dev/null;
2. confine itself (rlimits, Landlock), then run the code and find the entry point;
3. say ``{"ready": true, "names": [...]}`` (its top-level callables) on the response fd;
4. answer each request ``{"id", "fn", "args", "kwargs"}`` with ``{"id", "ok": value}``,
   ``{"id", "raise": name, "msg": text}`` or ``{"id", "timeout": text}``, values in plain.py's
   encoding. Whatever this process does to itself, all the judge ever receives is plain data.
"""

import _signal
import builtins
import marshal
import os
import sys

_MAX_NAMES = 1000


class _CallTimeout(BaseException):
    pass


def _on_alarm(signum, frame):
    raise _CallTimeout("test exceeded its time limit")


def _on_xcpu(signum, frame):
    raise _CallTimeout("CPU time limit reached (RLIMIT_CPU)")


def _describe(exc):
    try:
        text = str(exc)
    except BaseException:
        text = "<unprintable>"
    name = type(exc).__name__
    text = name + ": " + text if text else name
    return text if len(text) <= 2000 else text[:2000] + "...[truncated]"


def _load(job):
    """The entry point and the names to offer, or raise with a message for the judge."""
    ns = {"__name__": "candidate", "__builtins__": builtins}
    try:
        exec(compile(job["code"], "<candidate>", "exec"), ns)
    except BaseException as exc:
        raise RuntimeError("the code failed to run: " + _describe(exc)) from None
    entry = job["entry_point"]
    fn = None
    if entry:
        try:  # a name, or an expression such as LeetCode's Solution().twoSum
            fn = ns.get(entry) if entry.isidentifier() else eval(entry, ns)
        except BaseException:
            fn = None
        if not callable(fn):
            raise RuntimeError("the code does not define " + entry + "()")
    names = [k for k, v in list(ns.items()) if isinstance(k, str) and not k.startswith("__") and callable(v)]
    return fn, ns, names[:_MAX_NAMES]


def _answer(request, fn, ns, timeout):
    rid = request.get("id")
    try:
        name = request.get("fn") or ""
        target = fn if not name else ns.get(name)
        if not callable(target):
            return {"id": rid, "raise": "NameError", "msg": "name " + repr(name) + " is not defined"}
        args = decode(request.get("args"))
        kwargs = decode(request.get("kwargs"))
        if timeout:
            _signal.setitimer(_signal.ITIMER_REAL, timeout)
        try:
            value = target(*args, **kwargs)
            return {"id": rid, "ok": encode(value, False)}
        finally:
            if timeout:
                _signal.setitimer(_signal.ITIMER_REAL, 0)
    except _CallTimeout as exc:
        return {"id": rid, "timeout": str(exc.args[0]) if exc.args else "timeout"}
    except BaseException as exc:  # SystemExit included: one call's exit is that call's error
        return {"id": rid, "raise": type(exc).__name__, "msg": _describe(exc)}


def _flush():
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except BaseException:
            pass


def _serve(job, reader, out):
    fn, ns, names = _load(job)
    _flush()  # output is the code's own: flushed before each answer, so a kill loses none of it
    write_all(out, dumps({"ready": True, "names": names}))
    timeout = job["call_timeout_s"]
    while True:
        line = reader.next_line()
        if line is None:
            return
        try:
            reply = _answer(loads(line), fn, ns, timeout)
            data = dumps(reply)
        except BaseException as exc:
            data = dumps({"id": None, "raise": "PlainDataError", "msg": _describe(exc)})
        _flush()
        write_all(out, data)


def _main():
    job = marshal.loads(read_stdin())
    out = job["resp_fd"]
    try:
        confine(job)
        _signal.signal(_signal.SIGALRM, _on_alarm)
        _signal.signal(_signal.SIGXCPU, _on_xcpu)
        sys.dont_write_bytecode = True
    except BaseException as exc:
        write_all(
            out, dumps({"ready": False, "error": "the sandbox could not restrict itself: " + _describe(exc)})
        )
        os._exit(3)
    try:
        _serve(job, LineReader(job["req_fd"], job["message_cap"]), out)
    except RuntimeError as exc:
        write_all(out, dumps({"ready": False, "error": str(exc)}))
    except BaseException:
        pass  # the judge sees the pipe close and reports it
    _flush()
    os._exit(0)


if __name__ == "__main__":
    _main()
