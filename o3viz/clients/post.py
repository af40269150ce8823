"""One POST to a user-given HTTP endpoint that cannot be led astray: a total deadline and
redirects kept on their origin.

- The deadline covers the whole request: connecting, sending, the headers and the body. A socket
  timeout alone applies to each read, so a server that sends one byte a second (or its headers
  slowly) would hold a request forever; here a timer shuts the socket down when the deadline
  passes, which wakes the blocked read.
- A redirect is followed only to the same origin (scheme, host and port), at most
  ``MAX_REDIRECTS`` times, re-sending the same body. A redirect to another origin is refused in one
  line before anything, least of all the ``Authorization`` header, is sent there.
- The body is read up to ``limit`` + 1 bytes, so an endless reply stops at the limit.

Every failure is an ``EndpointError`` with a one-line message. ``check_timeout`` is the one check
of a user-given timeout, for every flag and option that takes one: positive, finite and at most
``MAX_TIMEOUT_S`` (a day). Far larger values pass ``math.isfinite`` but overflow the socket's and
the timer's clocks (``OverflowError`` from ``socket.settimeout``), so they are refused up front.
"""

from __future__ import annotations

import http.client
import math
import socket
import threading
import time
import urllib.parse
from dataclasses import dataclass

from o3viz.errors import O3vizError, UsageError

__all__ = ["MAX_REDIRECTS", "MAX_TIMEOUT_S", "EndpointError", "Reply", "check_timeout", "origin", "post"]

MAX_REDIRECTS = 3
MAX_TIMEOUT_S = 86_400.0  # a day: longer is a mistake, and ~1e10 s overflows socket.settimeout
_REDIRECTS = (301, 302, 303, 307, 308)
_CHUNK = 64 << 10


class EndpointError(O3vizError, RuntimeError):
    """The request failed: unreachable, past its deadline, a refused redirect, an HTTP error."""


@dataclass
class Reply:
    status: int
    reason: str
    body: bytes  # at most ``limit`` + 1 bytes


def check_timeout(seconds: object, name: str) -> float:
    """``seconds`` as a float if it is a usable timeout, else one ``UsageError`` line naming
    ``name`` (the flag or option it came from).

    >>> check_timeout(30, "--request-timeout")
    30.0
    >>> check_timeout(1e10, "-V timeout")
    Traceback (most recent call last):
    o3viz.errors.UsageError: -V timeout 1e+10: give seconds above 0 and at most 86400 (a day)
    """
    ok = isinstance(seconds, int | float) and not isinstance(seconds, bool)
    if not (ok and math.isfinite(seconds) and 0 < seconds <= MAX_TIMEOUT_S):  # type: ignore[arg-type]
        shown = f"{seconds:g}" if ok else repr(seconds)[:40]
        raise UsageError(f"{name} {shown}: give seconds above 0 and at most {MAX_TIMEOUT_S:g} (a day)")
    return float(seconds)  # type: ignore[arg-type]


def origin(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of ``url``, the port filled in from the scheme.

    >>> origin("http://127.0.0.1:8000/v1") == origin("http://127.0.0.1:8000/other")
    True
    >>> origin("https://Example.org/v1")
    ('https', 'example.org', 443)
    """
    u = urllib.parse.urlsplit(url)
    try:
        port = u.port
    except ValueError:
        raise EndpointError(f"{url!r} has an invalid port") from None
    return u.scheme.lower(), (u.hostname or "").lower(), port or (443 if u.scheme == "https" else 80)


def post(url: str, body: bytes, headers: dict[str, str], *, deadline_s: float, limit: int) -> Reply:
    """POST ``body`` to ``url`` and return the final reply, all within ``deadline_s`` seconds."""
    check_timeout(deadline_s, "the request's deadline")
    end = time.monotonic() + deadline_s
    start = origin(url)
    for _hop in range(MAX_REDIRECTS + 1):
        status, reason, location, data = _once(url, body, headers, end, deadline_s, limit)
        if status not in _REDIRECTS:
            return Reply(status, reason, data)
        if not location:
            raise EndpointError(f"HTTP {status} {reason}: a redirect without a Location")
        target = urllib.parse.urljoin(url, location)
        if origin(target) != start:
            scheme, host, port = origin(target)
            raise EndpointError(
                f"HTTP {status}: refused a redirect to another origin ({scheme}://{host}:{port}); "
                "nothing was sent there. Give the final address as --base-url"
            )
        url = target
    raise EndpointError(f"more than {MAX_REDIRECTS} redirects")


def _once(
    url: str, body: bytes, headers: dict[str, str], end: float, deadline_s: float, limit: int
) -> tuple[int, str, str | None, bytes]:
    u = urllib.parse.urlsplit(url)
    scheme, host, port = origin(url)
    if scheme not in ("http", "https") or not host:
        raise EndpointError(f"{url!r} is not an http:// or https:// address")
    left = end - time.monotonic()
    if left <= 0:
        raise EndpointError(f"no complete reply within the deadline of {deadline_s:g} s")
    cls = http.client.HTTPSConnection if scheme == "https" else http.client.HTTPConnection
    conn = cls(host, port, timeout=left)
    expired = threading.Event()

    def cut() -> None:  # wakes a read blocked on a server that dribbles or says nothing
        expired.set()
        sock = conn.sock
        if sock is not None:
            try:
                socket.socket.shutdown(sock, socket.SHUT_RDWR)
            except OSError:
                pass

    timer = threading.Timer(left, cut)
    timer.daemon = True
    timer.start()
    path = (u.path or "/") + (f"?{u.query}" if u.query else "")
    try:
        conn.request("POST", path, body=body, headers=headers)
        resp = conn.getresponse()
        data = _read(resp, limit, end)
        if expired.is_set():  # the cut ended the body early: what came is not the reply
            raise TimeoutError("deadline")
        if len(data) <= limit and resp.length:  # fewer bytes than Content-Length promised
            raise EndpointError(f"the reply was cut short ({resp.length} bytes missing)")
        return resp.status, resp.reason, resp.getheader("Location"), data
    except (OSError, http.client.HTTPException, ValueError) as exc:
        if expired.is_set() or time.monotonic() >= end:
            raise EndpointError(f"no complete reply within the deadline of {deadline_s:g} s") from None
        raise EndpointError(f"cannot reach it ({' '.join(str(exc).split()) or type(exc).__name__})") from None
    finally:
        timer.cancel()
        conn.close()


def _read(resp: http.client.HTTPResponse, limit: int, end: float) -> bytes:
    chunks, total = [], 0
    while total <= limit:
        if time.monotonic() >= end:
            raise TimeoutError("deadline")
        chunk = resp.read1(min(_CHUNK, limit + 1 - total)) if total < limit + 1 else b""
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)
