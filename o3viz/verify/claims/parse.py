"""Finding arithmetic chains in normalized text: expression runs and ``a = b = c`` chains.

A *run* is a maximal stretch that reads as one arithmetic expression (numbers, operators,
parentheses, ``%``, variables, unit words between operands). Runs joined by ``=``/``≈``/``is``
form a *chain*. Everything here works on :mod:`o3viz.verify.claims.text` output; spans are normalized
offsets that the caller maps back to the original text.
"""

from __future__ import annotations

from o3viz.verify.claims.latex import (
    after_subscript,
    applied,
    compares,
    group_follows,
    label_at,
    label_before,
    modulus,
    multiplies,
    next_past_math,
    property_of,
)
from o3viz.verify.claims.tokens import (
    FUNCS,
    ORDINALS,
    UNIT_LETTERS,
    Chain,
    Run,
    Tok,
    continues_left,
    is_bullet,
    is_dimension,
    is_term_letters,
    is_unit,
    kind_at,
    next_sig,
    skip_units,
    tokenize,
)

__all__ = ["Chain", "Run", "parse_expression", "scan_chains"]


def scan_chains(norm: str) -> list[Chain]:
    """All chains of two or more runs in normalized text."""
    toks = tokenize(norm)
    chains: list[Chain] = []
    i = 0
    while i < len(toks):
        if not _can_start(toks, i):
            i += 1
            continue
        run, j = _read_run(toks, i)
        if run is None:
            i = max(j, i + 1)
            continue
        runs, links = [run], []
        while True:
            k, link = _find_link(toks, j, runs[-1], i)
            if link is None:
                break
            nxt, j2 = _read_run(toks, k)
            if nxt is None or link == "is" and compares(toks, j2):
                break  # "31^2 is 600 greater than 19^2", "5^8 is 5 raised to the power of 8"
            runs.append(nxt)
            links.append(link)
            j = j2
        if len(runs) > 1:
            _find_link(toks, j, runs[-1])  # the last run's unit words
            chains.append(Chain(runs, links, modulus=modulus(toks, i, j)))
        i = max(j, i + 1)
    return chains


def _can_start(toks: list[Tok], i: int) -> bool:
    """Cheap pre-check: most words cannot start an expression (a call like "arctan(" can)."""
    t = toks[i]
    if t.kind == "WORD":
        return (
            len(t.text) == 1 or t.text[0] == "\\" or t.text.lower() in FUNCS or kind_at(toks, i + 1) == "LP"
        )
    return t.kind in ("NUM", "CUR", "OP", "LP")


def _find_link(toks: list[Tok], j: int, prev: Run, start: int = -1) -> tuple[int, str | None]:
    """After a run: skip trailing unit words, then expect ``=``/``≈``/``is``. Unit words are
    skipped only inside the math: "\\(2009 \\times 2009\\) square is" names the square, except
    a label the chain starting at token ``start`` restated ("\\] \\[ Total fruits = 178")."""
    j, crossed = next_past_math(toks, j)
    if not crossed:
        k = skip_units(toks, j)
        if k > j:  # most runs have no unit words after them: nothing to join
            prev.units = " ".join(t.text.lower().rstrip("s") for t in toks[j:k] if t.kind == "WORD")
            j, crossed = next_past_math(toks, k)
    elif (
        start >= 0 and (label := label_at(toks, j)) and label == label_before(toks, start)
    ):  # "\\[ Total = 52 + 24 \\] \\[ Total = 178 \\]"
        j = skip_units(toks, j)
    if kind_at(toks, j) == "EQ":
        text = toks[j].text
        return j + 1, "≈" if text in ("≈", "~") else "="
    if kind_at(toks, j) == "WORD" and toks[j].text.lower() in ("is", "equals"):
        if (prev.n_ops or prev.has_of) and not (crossed and prev.units):
            k, _ = next_past_math(toks, j + 1)
            if kind_at(toks, k) in ("NUM", "CUR") or (kind_at(toks, k) == "OP" and toks[k].text == "-"):
                return j + 1, "is"
    return j, None  # not "are": "the units digits of 13^19 and 19^13 are 7 and 9" pairs a list


def _read_run(toks: list[Tok], i: int) -> tuple[Run | None, int]:
    """Read one expression run starting at token i; returns (run or None, next index)."""
    i, _ = next_past_math(toks, i)
    run = Run()
    state = _RunState(toks, run)
    j = i
    while j < len(toks):
        nxt = state.step(j)
        if nxt is None:
            break
        j = nxt
    if not run.items:
        return None, j
    _finish(toks, run, i, state)
    run.guarded = run.guarded or group_follows(toks, j, run)
    k = next_sig(toks, j)
    if k < len(toks) and toks[k].text == ":":
        n = next_sig(toks, k + 1)
        n = next_sig(toks, n + 1) if n < len(toks) and toks[n].text == "-" else n
        run.guarded = run.guarded or kind_at(toks, n) == "NUM"  # "2: -3" is a ratio
    return (run if run.items else None), j


class _RunState:
    """Consumes tokens into a Run; ``step`` returns the next index or None to stop."""

    def __init__(self, toks: list[Tok], run: Run) -> None:
        self.toks, self.run = toks, run
        self.last: str | None = None  # None, "operand", "operator"
        self.depth = 0
        self.first_tok: int | None = None
        self.open_at: list[int] = []  # item index of each unmatched "("
        self.item_starts: list[int] = []  # normalized start of each item
        self.item_ends: list[int] = []
        self.saw_div = False  # "26/5 ÷ 17/4": ÷ next to / has no agreed precedence
        self.bullet = False  # the run starts a list item: nothing to its left belongs to it

    def push(self, kind: str, text: str, j: int) -> None:
        if self.first_tok is None:
            self.first_tok = j
        self.run.items.append((kind, text))
        self.item_starts.append(self.toks[j].start)
        self.item_ends.append(self.toks[j].end)

    def step(self, j: int) -> int | None:
        t = self.toks[j]
        k = t.kind
        if k == "WS" or k == "SEP" and self.bullet and self.last is None:  # "- \\(3 \\times 8"
            return j + 1
        if k == "CUR":
            n = next_sig(self.toks, j + 1)
            if self.last != "operand" and (
                kind_at(self.toks, n) in ("NUM", "LP") or self.toks[n].text == "-"
                if n < len(self.toks)
                else False
            ):
                if self.first_tok is None:
                    self.first_tok = j
                return j + 1
            return None
        handler = getattr(self, f"_on_{k.lower()}", None)
        return handler(j, t) if handler else None

    def _on_num(self, j: int, t: Tok) -> int | None:
        if self.last == "operand":
            return None
        self.push("NUM", t.text, j)
        self.last = "operand"
        nxt = self.toks[j + 1] if j + 1 < len(self.toks) else None
        if nxt is not None and nxt.kind == "PCT":
            self.push("PCT", "%", j + 1)
            return j + 2
        if nxt is not None and nxt.kind == "WORD" and nxt.text.lower() in ORDINALS:
            return self._symbol(j, t.text + nxt.text, j + 2)  # "2nd + 3 = 5th": places
        if nxt is not None and nxt.text == "_":
            return self._symbol(j, t.text + "_", after_subscript(self.toks, j + 2))  # 0.101_2
        return j + 1

    def _symbol(self, j: int, text: str, nxt: int) -> int:
        """The operand just pushed is a symbol, not its number ("5th", "0.101_2", "12!")."""
        self.run.items[-1] = ("VAR", text)
        self.item_ends[-1] = self.toks[nxt - 1].end
        self.run.symbolic = True
        return nxt

    def _on_other(self, j: int, t: Tok) -> int | None:
        """A factorial "12!" or "(n+1)!" (not "!="): the run holds a value we do not compute."""
        if t.text != "!" or self.last != "operand" or self.toks[j - 1].kind == "WS":
            return None
        if kind_at(self.toks, j + 1) == "EQ":
            return None
        if self.run.items[-1][0] == "NUM":
            return self._symbol(j, self.run.items[-1][1] + "!", j + 1)
        self.push("VAR", "!", j)
        self.run.symbolic = True
        return j + 1

    def _on_op(self, j: int, t: Tok) -> int | None:
        if self.last is None and t.text in "-*" and is_bullet(self.toks, j):
            self.bullet = True
            return j + 1  # "- 16^1 = 16": a list bullet, not a minus sign
        if t.text == "/" and self.last == "operand" and kind_at(self.toks, j + 1) == "WORD":
            if is_unit(self.toks[j + 1].text):  # "$15/hour": a unit, not a division
                nxt = self._after_unit(j + 2)
                return j + 2 if nxt is None else nxt
            if self.toks[j + 1].text.lower() not in FUNCS and len(self.toks[j + 1].text) > 1:
                return None
        if t.text == "±":
            self.run.symbolic = True  # "\\frac{-2 \\pm 6}{2}" has two values, neither the result
        if t.text == "÷":
            self.saw_div = self.run.divides = True
            t = Tok("OP", "/", t.start, t.end)
        if t.text == "−":  # the spoken "minus": if it starts a run, its left side is elsewhere
            self.run.guarded = self.run.guarded or self.last != "operand"
            t = Tok("OP", "-", t.start, t.end)
        if self.last == "operand":
            self.push("OP", t.text, j)
        elif t.text in "+-±":
            self.push("NEG" if t.text != "+" else "POS", t.text, j)
            if t.text == "+":
                self.run.items.pop()
                self.item_starts.pop()
                self.item_ends.pop()
        else:
            return None
        self.last = "operator"
        return j + 1

    def _on_lp(self, j: int, t: Tok) -> int | None:
        if self.last == "operand":
            if self.toks[j - 1].kind == "WS":
                # "2 \\frac{1}{2}" (a mixed number) or "2 \\frac{a}{b}": the run goes on
                self.run.guarded = self.run.guarded or kind_at(self.toks, j + 1) == "LP"
                return None
            self.push("OP", "*", j)
            self.run.ambiguous = True
        self.open_at.append(len(self.run.items))
        self.push("LP", "(", j)
        self.depth += 1
        self.last = "operator"
        return j + 1

    def _on_rp(self, j: int, t: Tok) -> int | None:
        if self.depth == 0 or self.last != "operand":
            return None
        self.push("RP", ")", j)
        self.open_at.pop()
        self.depth -= 1
        return j + 1

    def _on_word(self, j: int, t: Tok) -> int | None:
        lw = t.text.lower()
        n = next_sig(self.toks, j + 1)
        nk = kind_at(self.toks, n)
        if lw == "x" and self.last == "operand" and nk in ("NUM", "LP", "CUR"):
            if is_dimension(self.toks, n):
                self.run.guarded = True  # "a 2 x 4 piece of wood": a size, maybe not a product
            self.push("OP", "*", j)
            self.last = "operator"
            return j + 1
        if lw == "of" and self.last == "operand" and nk in ("NUM", "LP", "CUR") and self._can_of():
            self.push("OP", "*", j)
            self.run.has_of = True
            self.last = "operator"
            return j + 1
        if lw in FUNCS and kind_at(self.toks, j + 1) in ("LP", "NUM"):
            if self.last == "operand":
                if self.toks[j - 1].kind == "WS":
                    self.run.guarded = True  # "2 \\sqrt{3}": a product the run stops before
                    return None
                self.push("OP", "*", j)  # "3√13"
                self.run.ambiguous = True
            self.push("FUNC", lw, j)
            self.last = "operator"
            return j + 1
        return self._on_symbol_or_unit(j, t, n, nk)

    def _can_of(self) -> bool:
        items = self.run.items
        if items[-1][0] == "PCT":
            return True
        return len(items) >= 3 and items[-2] == ("OP", "/") and items[-3][0] == "NUM"

    def _on_symbol_or_unit(self, j: int, t: Tok, n: int, nk: str) -> int | None:
        if self.last == "operand" and t.text in UNIT_LETTERS and self.toks[j - 1].kind == "WS":
            return self._after_unit(j)  # "7.5 m + 2.25 m": a one-letter unit ("2L + 8" is algebra)
        glued = j > 0 and self.toks[j - 1].kind in ("NUM", "RP")
        is_var = len(t.text) == 1 or t.text.startswith("\\") or t.text == "π"
        is_var = is_var or glued and is_term_letters(t.text)  # "3ab" is a term, "7kg" a quantity
        if self.last == "operand" and not glued and multiplies(t.text):
            self.run.guarded = True  # "2 \\cdot 2 \\cdot 3 \\cos C": the product goes on
            return None
        if is_var or nk == "LP" and self.toks[j + 1].kind == "LP":
            if self.last == "operand" and not glued:
                return None
            if self.last == "operand":
                self.push("OP", "*", j)
            self.push("VAR", t.text, j)
            self.run.symbolic = True
            self.last = "operand"
            return j + 1
        if self.last == "operand" and is_unit(t.text):
            return self._after_unit(j)
        return None

    def _after_unit(self, j: int) -> int | None:
        """Continue past unit words only if an operator and an operand follow them."""
        k = skip_units(self.toks, next_sig(self.toks, j))
        is_op = kind_at(self.toks, k) == "OP" and self.toks[k].text in "+-*/"
        if kind_at(self.toks, k) == "RP" and self.depth > 0:
            return k  # "(3 feet / 1 yard)"
        if is_op or kind_at(self.toks, k) == "WORD" and self.toks[k].text.lower() == "x":
            after = next_sig(self.toks, k + 1)
            if kind_at(self.toks, after) in ("NUM", "CUR", "LP"):
                return k
        return None


def _finish(toks: list[Tok], run: Run, i: int, state: _RunState) -> None:
    """Drop a dangling operator, cut at an unclosed "(", set span and the guard flag."""
    while run.items and run.items[-1][0] in ("OP", "NEG", "LP", "FUNC"):
        run.items.pop()
        run.guarded = True  # "(3/4)*number of novels": the expression goes on in words
    if not run.items:
        return
    if state.saw_div and sum(t == "/" for _, t in run.items) > 1:
        run.ambiguous = True
    end = state.item_ends[len(run.items) - 1]
    starts = state.item_starts[: len(run.items)]
    open_at = [a for a in state.open_at if a < len(run.items)]
    if open_at:
        cut = open_at[-1] + 1
        run.items[:] = run.items[cut:]
        starts = starts[cut:]
        run.guarded = True
    if not run.items:
        return
    first = state.first_tok if state.first_tok is not None else i
    run.start = toks[first].start if not open_at else starts[0]
    run.end = end
    run.guarded = run.guarded or not state.bullet and continues_left(toks, first, run)
    run.property_of = property_of(toks, first)
    if run.items[0][0] == "LP" and applied(toks, first):
        run.guarded = True  # "f \\left( \\frac{1}{3} \\right)": an argument, not a value


def parse_expression(norm: str) -> Run | None:
    """``norm`` read as one whole expression run, or None if it is not exactly one."""
    toks = tokenize(norm)
    run, j = _read_run(toks, 0)
    if run is None or next_sig(toks, j) < len(toks):
        return None
    return run
