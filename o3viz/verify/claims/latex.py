"""Reading competition LaTeX in the claim checker: the token-level rules that keep a chain to
what the author wrote (issue 63) — math delimiters that end an expression, a label restated
across displays ("\\[ Total = 52 + 24 \\] \\[ Total = 178 \\]"), arithmetic modulo a number, a
property named before "of" ("the units digit of 3^3"), a function applied to a bracket
("f(1/3)"), subscripts ("0.101_2"), a product that goes on past the run ("2 \\cos C") and a
thousands group written with a blank ("10\\;500").

Every helper looks at most ``LOOK_BACK`` tokens around one place, so a scan stays linear.
"""

from __future__ import annotations

from o3viz.verify.claims.tokens import LOOK_BACK, Run, Tok, kind_at, skip_units

__all__ = [
    "PROPERTY_NOUNS",
    "adds",
    "converts",
    "after_subscript",
    "applied",
    "compares",
    "group_follows",
    "label_at",
    "label_before",
    "modulus",
    "multiplies",
    "next_past_math",
    "property_of",
    "stated_remainder",
]

_MOD_WORDS = {"\\pmod", "\\mod", "\\bmod", "mod", "modulo", "\\equiv", "≡"}


def modulus(toks: list[Tok], i: int, j: int) -> int | None:
    """The modulus of the chain in tokens [i, j) when it is arithmetic modulo a number: "\\equiv"
    or "\\pmod{17}" / "mod 83" in it or in the rest of its line ("4^4 = (4^2)^2 = (-1)^2 = 1
    \\pmod{17}"): the number after the mod word, 0 when none can be read, None when the chain is
    plain arithmetic. Looks at most ``LOOK_BACK`` tokens past the chain: each chain costs its
    own length."""
    stop = min(len(toks), j + LOOK_BACK)
    found = None
    for k in range(i, stop):
        if toks[k].kind == "NL" and k >= j:
            break
        text = toks[k].text.lower()
        if text in _MOD_WORDS:
            found = 0 if found is None else found
            if text != "\\equiv" and text != "≡":
                return _number_after(toks, k + 1) or found
    return found


def _number_after(toks: list[Tok], k: int) -> int:
    """The whole number within three tokens after ``k`` ("mod 83", "\\pmod{17}"), else 0."""
    for t in toks[k : k + 4]:
        if t.kind == "NUM":
            return int(t.text) if t.text.isdigit() and len(t.text) < 12 else 0
        if t.kind not in ("WS", "LP"):
            return 0
    return 0


def group_follows(toks: list[Tok], j: int, run: Run) -> bool:
    """Whether a bare number of up to three digits is followed by a blank or a comma and three
    more digits: "10\\;500", "10, 500" may be one number (10500), so neither reading is sure."""
    if len(run.items) != 1 or not run.items[0][1].isdigit() or len(run.items[0][1]) > 3:
        return False
    comma = kind_at(toks, j) == "OTHER" and toks[j].text == ","
    k = j + comma
    k += kind_at(toks, k) == "WS" and len(toks[k].text) <= 2
    blank = toks[j - 1].kind == "WS" and len(toks[j - 1].text) <= 2  # the run read the blank
    if not (comma or k > j or blank) or kind_at(toks, k) != "NUM":
        return False
    if len(toks[k].text.partition(".")[0]) != 3:
        return False
    return toks[k].text.partition(".")[0].isdigit()


def label_at(toks: list[Tok], j: int) -> tuple[str, ...]:
    """The unit words at ``j`` when an "=" follows them ("Total fruits =")."""
    k = skip_units(toks, j)
    if k == j or kind_at(toks, k) != "EQ":
        return ()
    return tuple(t.text.lower() for t in toks[j:k] if t.kind == "WORD")


def label_before(toks: list[Tok], i: int) -> tuple[str, ...]:
    """The label of a chain starting at ``i``: up to four words before an "=" before it."""
    p = i - 1
    while p >= 0 and toks[p].kind in ("WS", "SEP") and i - p < LOOK_BACK:
        p -= 1
    if p < 0 or toks[p].kind != "EQ":
        return ()
    words: list[str] = []
    p -= 1
    while p >= 0 and len(words) < 4 and i - p < LOOK_BACK and toks[p].kind in ("WS", "WORD"):
        if toks[p].kind == "WORD":
            words.insert(0, toks[p].text.lower())
        p -= 1
    return tuple(words)


def applied(toks: list[Tok], first: int) -> bool:
    """Whether a letter or a command stands right before the "(" at ``first`` ("f (1/3)")."""
    p = first - 1
    while p >= 0 and toks[p].kind == "WS" and first - p < LOOK_BACK:
        p -= 1
    if p < 0 or toks[p].kind != "WORD":
        return False
    w = toks[p].text
    return w.startswith("\\") or len(w) == 1 and w not in ("a", "A", "I")


def after_subscript(toks: list[Tok], j: int) -> int:
    """Index past a subscript at ``j``: "2" of "0.101_2", "(10)" of "40_{10}" (at most 8 tokens)."""
    if kind_at(toks, j) in ("NUM", "WORD"):
        return j + 1
    if kind_at(toks, j) != "LP":
        return j
    k = j + 1
    while k < len(toks) and k - j < 8 and toks[k].kind != "RP":
        k += 1
    return k + 1 if kind_at(toks, k) == "RP" else j


# commands and letters that multiply what comes before them ("2 \\cos C", "12 π"): an expression
# that stops before one of these goes on, so what it was read as is only its head
_MULTIPLYING = set(
    "\\cos \\sin \\tan \\cot \\sec \\csc \\log \\ln \\exp \\arcsin \\arccos \\arctan \\binom "
    "\\dbinom \\alpha \\beta \\gamma \\delta \\theta \\phi \\varphi \\omega \\lambda \\mu \\sigma "
    "\\tau \\rho \\angle \\triangle \\overline \\lfloor \\lceil π R".split()  # R: "58 R 5"
)
# "the units digit of 3^3, which is 7", "the exponent of 13^19 is 19": what follows "<noun> of" is
# the argument of a property, and "is" states the property, not the expression's value
PROPERTY_NOUNS = set(
    "digit digits exponent exponents base divisor divisors factor factors "
    "multiple multiples power powers root roots reciprocal inverse numerator denominator "
    "coefficient coefficients degree sign term terms place position period order "
    "logarithm log parity magnitude remainder remainders residue".split()
)


def multiplies(word: str) -> bool:
    """Whether ``word`` after a number and a blank goes on the expression ("2 \\cos C")."""
    if word in _MULTIPLYING:
        return True
    return len(word) == 1 and word.isalpha() and word.islower() and word != "a"  # "2 r", not "M&M"


def next_past_math(toks: list[Tok], j: int) -> tuple[int, bool]:
    """Index of the next token at or after j that is neither whitespace nor a math delimiter,
    and whether a delimiter was crossed ("\\(3 + 4\\) = 7" links across one)."""
    crossed = False
    while j < len(toks) and toks[j].kind in ("WS", "SEP"):
        crossed = crossed or toks[j].kind == "SEP"
        j += 1
    return j, crossed


def property_of(toks: list[Tok], first: int) -> str:
    """The property noun the run starting at token ``first`` follows with "of" ("digit" in
    "the units digit of 3^3", "remainder" in "the remainder of 2^3"), or ""."""
    p, words = first - 1, []
    while p >= 0 and first - p < LOOK_BACK and len(words) < 2:
        t = toks[p]
        p -= 1
        if t.kind in ("WS", "SEP", "CUR"):
            continue
        if t.kind != "WORD":
            break
        words.append(t.text.lower())
        if words[0] != "of":
            return ""  # most runs: no "of" before them, one token looked at
    return words[1] if len(words) == 2 and words[1] in PROPERTY_NOUNS else ""


def adds(run: Run) -> bool:
    """ "1000 - 7 * 142": the remainder of a subtraction is computed, not named."""
    return any(k == "OP" and t in "+-" for k, t in run.items)


def converts(left: Run, right: Run, written: str) -> bool:
    """A number of one unit equal to a number of another ("\\frac14 inch = 10 miles"), where
    the left side holds no unit of its own ("75 miles / 15 mph = 5 hours" is a division)."""
    if not (left.units and right.units and left.units != right.units):
        return False
    # written: the left side as normalized: "((1)/(4))", "1/2"; not "156 / 3", "10/100 * 30"
    return left.is_simple and not any(ch.isalpha() or ch.isspace() for ch in written)


def stated_remainder(expr: Run, stated: list) -> bool:
    """Whether ``a / b`` (whole numbers) is stated as ``a mod b``."""
    items = expr.items
    if len(items) != 3 or items[1] != ("OP", "/") or not all(t.isdigit() for _, t in items[::2]):
        return False
    a, b = int(items[0][1]), int(items[2][1])
    return b > 0 and any(r == a % b for r, _ in stated)


# words after "is N" that make N a difference, a factor or a base, not the value
_COMPARATIVES = set(
    "greater more less fewer larger smaller bigger higher lower times raised multiplied divided "
    "plus minus than short over under".split()
)


def compares(toks: list[Tok], j: int) -> bool:
    """Whether the run ending before token ``j`` is followed by a comparative or an operation
    in words ("is 600 greater than", "is 5 raised to the power of 8"): at most 4 tokens."""
    k = j
    while k < len(toks) and k - j < 4 and toks[k].kind in ("WS", "SEP"):
        k += 1
    return kind_at(toks, k) == "WORD" and toks[k].text.lower() in _COMPARATIVES
