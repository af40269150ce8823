# ruff: noqa: F821  (encode, decode, dumps, loads, LineReader, write_all, PlainDataError come from
# plain.py; _str, _type, _StepTimeout, _MESSAGE_CAP, _BaseException from trusted_tests.py, which follows
# this file in the judge's one ``python -c`` source and only then starts running)
"""The judge's end of the pipe to the candidate's process: ``candidate`` in the tests is a proxy
from here. Arguments go out as plain data; what comes back is a decoded plain value, a builtin
exception raised again here, a timeout, or ``CandidateGone``. Nothing else is accepted.

An exception that crosses must never end an iteration here: a ``StopIteration`` raised inside the
judge's ``map``, ``filter``, ``next(it, default)`` or ``iter(f, sentinel)`` would read as the end of
input and skip the rest of the test (a false pass). So ``StopIteration`` and ``StopAsyncIteration``
arrive as ``RuntimeError`` (as PEP 479 does for a generator), and only ``Exception`` subclasses
arrive at all: ``BaseException`` ones (``SystemExit``, ``KeyboardInterrupt``, ``GeneratorExit``)
and every non-builtin type become ``CandidateGone``. What arrives is a fresh instance built here
from a type name and a string, so its ``__eq__``, ``__bool__`` and ``__str__`` are the builtin's."""

import builtins

_ITERATION_ENDS = (StopIteration, StopAsyncIteration)
_EXCEPTIONS = {
    k: v
    for k, v in vars(builtins).items()
    if isinstance(v, type) and issubclass(v, Exception) and v.__module__ == "builtins"
}


class CandidateGone(Exception):
    """The candidate's process ended, or sent something that is not plain data."""


class _Candidate:
    """The judge's end of the pipe to the candidate's process: calls go out, plain values come back."""

    def __init__(self, job):
        self.out = job["req_fd"]
        self.reader = LineReader(job["resp_fd"], job["message_cap"])
        self.next_id = 0
        self.dead = ""

    def _receive(self):
        try:
            line = self.reader.next_line()
            if line is None:
                self.dead = "no result: the candidate's process ended"
                raise CandidateGone(self.dead)
            return loads(line)
        except PlainDataError as exc:
            self.dead = "the candidate sent something that is not plain data (" + _str(exc) + ")"
            raise CandidateGone(self.dead) from None

    def hello(self):
        """The candidate's top-level names; CandidateGone with its load error otherwise."""
        try:
            msg = self._receive()
        except CandidateGone as exc:
            if self.dead.startswith("no result"):
                raise CandidateGone("the code ended its process before it was ready") from None
            raise exc
        if msg.get("ready") is not True:
            raise CandidateGone(_str(msg.get("error") or "the code failed to load"))
        names = msg.get("names")
        return [n for n in names if _type(n) is _str] if _type(names) is list else []

    def call(self, name, args, kwargs):
        if self.dead:
            raise CandidateGone(self.dead)
        rid = self.next_id
        self.next_id += 1
        try:
            request = {
                "id": rid,
                "fn": name,
                "args": encode(list(args), True),
                "kwargs": encode(kwargs, True),
            }
        except PlainDataError as exc:
            raise TypeError("cannot pass this argument to the candidate: " + _str(exc)) from None
        try:
            write_all(self.out, dumps(request))
        except OSError:
            self.dead = "no result: the candidate's process ended"
            raise CandidateGone(self.dead) from None
        while True:  # replies to calls a step timeout abandoned arrive late: skip them
            msg = self._receive()
            if msg.get("id") == rid:
                return self._result(msg)

    def _result(self, msg):
        if "ok" in msg:
            try:
                return decode(msg["ok"])
            except PlainDataError as exc:
                self.dead = "the candidate sent something that is not plain data (" + _str(exc) + ")"
                raise CandidateGone(self.dead) from None
        if "timeout" in msg:
            raise _StepTimeout(_str(msg["timeout"])[:200])
        text = _str(msg.get("msg", ""))[:_MESSAGE_CAP]
        kind = _EXCEPTIONS.get(msg.get("raise"))
        if kind is None:
            raise CandidateGone("the candidate raised " + text)
        if issubclass(kind, _ITERATION_ENDS):
            raise RuntimeError("the candidate raised " + text)
        try:
            exc = kind(text.partition(": ")[2] if text.startswith(_str(msg.get("raise")) + ":") else text)
        except _BaseException:  # a builtin that needs more arguments (UnicodeDecodeError)
            raise CandidateGone("the candidate raised " + text) from None
        raise exc

    def proxy(self, name):
        def call(*args, **kwargs):
            return self.call(name, args, kwargs)

        call.__name__ = call.__qualname__ = name or "candidate"
        return call
