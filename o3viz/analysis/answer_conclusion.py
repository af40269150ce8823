"""The conclusion of one sentence of model text: "<subject> = X" or "<subject> is X" at its end,
with X answer-shaped (``o3viz.analysis.answer_reading`` judges whose value it is). Linear in the
sentence: X is found from the end with ``rfind`` and one bounded bracket walk, never by a regex
that could backtrack (issue 62 break 5: the pattern this replaces took 20-27 ms on a 385-character
"So =1=1…=1?x").

>>> conclusion("So the count is 3*3 = 9.", 2)
('9', 22, ' the count')
"""

from __future__ import annotations

__all__ = ["MAX_X_CHARS", "answer_shaped", "conclusion"]

MAX_X_CHARS = 80  # an answer-shaped X is at most this long
_VERBS = ("=", "is", "are", "equals")
_PREDICATE = frozenset({"is", "are", "was", "were", "be", "not", "isn't", "aren't"})
_CLAUSE_BREAKS = (
    ",", ";", ":", " and ", " gives ", " giving ", " making ", " then ", " so ", " which ", " where ",
    " when ", " if ",
)  # fmt: skip


def _tail_cuts(body: str, pos: int) -> list[int]:
    """Where X may end: before closing punctuation and bold, then before one or two trailing
    lowercase words (units: "90 degrees") or one trailing remark in parentheses ("(taking k=0)")."""
    end = len(body)
    while end > pos and (body[end - 1] in ".!*" or body[end - 1].isspace()):
        end -= 1
    cuts = [end]
    at = end
    for _ in range(2):  # unit words
        sp = body.rfind(" ", pos, at)
        word = body[sp + 1 : at]
        if sp < 0 or not word.isalpha() or not word.islower() or word in _PREDICATE:
            break  # "x = 0.0001 is excluded" says something of X: no unit tail, no conclusion
        at = sp
        cuts.append(len(body[:at].rstrip()))
    if body[end - 1 : end] == ")":
        open_ = _opening(body, pos, end)
        if open_ is not None and " " in body[open_:end]:
            cuts.append(len(body[:open_].rstrip()))
    return cuts


def _opening(body: str, pos: int, end: int) -> int | None:
    """The ``(`` that closes at ``body[end - 1]``, searched back at most ``MAX_X_CHARS``, or None."""
    depth = 0
    for i in range(end - 1, max(pos, end - MAX_X_CHARS) - 1, -1):
        depth += {")": 1, "(": -1}.get(body[i], 0)
        if depth == 0:
            return i
    return None


def conclusion(body: str, pos: int, *, bare: bool = False) -> tuple[str, int, str] | None:
    """The conclusion of the sentence ``body[pos:]`` (after its opening word): the answer-shaped X
    at its end, X's offset, and the subject (the clause before the verb), or None. ``bare``: the
    opening word holds the verb ("That's"), so X may follow it directly."""
    for end in _tail_cuts(body, pos):
        if end <= pos:
            continue
        found = _span_x(body, pos, end, bare) or _token_x(body, pos, end, bare)
        if found is not None:
            return found
    return None


def _span_x(body: str, pos: int, end: int, bare: bool) -> tuple[str, int, str] | None:
    """X as a math span ending at ``end`` (``$…$``, ``\\(…\\)``, ``\\[…\\]``): its right side, or the
    whole span after a verb."""
    for opener, closer in (("$", "$"), ("\\(", "\\)"), ("\\[", "\\]")):
        if not body.endswith(closer, pos, end):
            continue
        open_ = body.rfind(opener, pos, end - len(closer))
        if open_ < 0 or end - open_ > MAX_X_CHARS + 4:
            return None
        inner_at = open_ + len(opener)
        inner = body[inner_at : end - len(closer)]
        first, last = inner.find("="), inner.rfind("=")
        if last >= 0:
            x_at = inner_at + last + 1
            subject = body[pos:open_] + " " + inner[:first]
            return _finish(body, x_at, end - len(closer), subject)
        verb_end = _verb_before(body, pos, open_, bare)
        return None if verb_end is None else _finish(body, inner_at, end - len(closer), body[pos:verb_end])
    return None


def _token_x(body: str, pos: int, end: int, bare: bool) -> tuple[str, int, str] | None:
    """X as the last word (or bracketed tuple) before ``end``: after an ``=`` inside it, or after a
    verb before it (past a GSM8K calculator note ``$<<9*2=18>>``)."""
    start = max(body.rfind(" ", pos, end), body.rfind("\n", pos, end)) + 1
    if body[end - 1] == ")" and body[start:end].count(")") > body[start:end].count("("):
        start = _opening(body, pos, end) or start  # a tuple with spaces: "(3, \pi/2)"
    start = max(start, pos)
    tok = body[start:end]
    note = tok.rfind(">>")
    if note >= 0 and tok.lstrip("$").startswith("<<"):
        x_at = start + note + 2
    elif "=" in tok and not tok.startswith("("):
        return _finish(body, start + tok.rfind("=") + 1, end, body[pos:start] + " " + tok[: tok.find("=")])
    else:
        x_at = start
    verb_end = _verb_before(body, pos, start, bare)
    return None if verb_end is None else _finish(body, x_at, end, body[pos:verb_end])


def _verb_before(body: str, pos: int, at: int, bare: bool = False) -> int | None:
    """Where the subject ends if ``body[pos:at]`` ends with a verb ("=", "is", "are", "equals",
    then an optional ``$``; nothing at all after a ``bare`` opening), else None."""
    pre = body[pos:at].rstrip().removesuffix("$").rstrip()
    if bare and not pre:
        return pos
    for verb in _VERBS:
        if pre.endswith(verb) and (verb == "=" or len(pre) == len(verb) or not pre[-len(verb) - 1].isalnum()):
            return pos + len(pre) - len(verb)
    return None


def _finish(body: str, x_at: int, x_end: int, subject: str) -> tuple[str, int, str] | None:
    """X cleaned (stripped, a "$" amount's sign dropped) if answer-shaped, with its offset and the
    subject cut to its clause (after the last comma or "and", before the first verb)."""
    x = body[x_at:x_end]
    lead = len(x) - len(x.lstrip())
    x, x_at = x.strip().rstrip(".,;:"), x_at + lead
    if x.startswith("$"):
        x, x_at = x[1:], x_at + 1
    for close in ("\\)", "\\]", "$"):
        x = x.removesuffix(close)
    if not answer_shaped(x):
        return None
    for brk in _CLAUSE_BREAKS:
        subject = subject.rpartition(brk)[2] if brk in subject else subject
    for verb in (" is ", "=", " are ", " equals "):
        subject = subject.partition(verb)[0]
    return x, x_at, subject


def answer_shaped(x: str) -> bool:
    """At most ``MAX_X_CHARS``, brackets balanced, no ``<``/``>``, and a number, a formula (a
    digit, ``\\``, π or √ in it) or a tuple."""
    if not x or len(x) > MAX_X_CHARS or "<" in x or ">" in x:
        return False
    depth = 0
    for c in x:
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(c, 0)
        if depth < 0:
            return False
    return depth == 0 and any(c.isdigit() or c in "\\π√" for c in x)
