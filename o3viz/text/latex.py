"""LaTeX made readable as plain text, for names, labels and one-line questions: ``\\frac{a}{b}`` →
``a/b``, ``\\overline{BC}`` → ``B̅C̅``, ``\\sqrt{13}`` → ``√13``, ``90^\\circ`` → ``90°``, symbols as
their characters, ``$``/``\\(``/``\\[`` and wrappers (``\\text``, ``\\boxed``, ``\\mathrm``) dropped.

An unknown command keeps its name without the backslash (``\\foo`` → ``foo``), so nothing is lost
silently, and braces never glue words together. Text without a backslash or ``$`` is returned as
it is (code stays code). Work is linear in the text; arguments nested deeper than ``MAX_DEPTH``
keep their inner text as written.
"""

from __future__ import annotations

import re

MAX_DEPTH = 8
_CMD = re.compile(r"\\([A-Za-z]+|.)", re.S)
_FRACS = ("frac", "dfrac", "tfrac", "cfrac")
_OVER = ("overline", "bar", "overrightarrow", "vec", "widehat", "hat")
_WRAPPERS = {
    "text", "textrm", "textbf", "textit", "mathrm", "mathbf", "mathit", "mathbb", "mathcal",
    "boxed", "fbox", "operatorname", "emph", "mbox",
}  # fmt: skip
_SYMBOLS = {
    "cdot": "·", "times": "×", "div": "÷", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥",
    "neq": "≠", "ne": "≠", "approx": "≈", "pm": "±", "mp": "∓", "infty": "∞", "in": "∈",
    "pi": "π", "theta": "θ", "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "Delta": "Δ",
    "lambda": "λ", "mu": "μ", "sigma": "σ", "phi": "φ", "omega": "ω", "circ": "°", "degree": "°",
    "angle": "∠", "triangle": "△", "perp": "⊥", "parallel": "∥", "cong": "≅", "sim": "∼",
    "ldots": "…", "dots": "…", "cdots": "⋯", "sum": "Σ", "prod": "Π", "to": "→", "rightarrow": "→",
    "Rightarrow": "⇒", "implies": "⇒", "cup": "∪", "cap": "∩", "subseteq": "⊆", "emptyset": "∅",
    "left": "", "right": "", "displaystyle": "", "limits": "", "quad": " ", "qquad": " ",
    "%": "%", "$": "$", "&": "&", "#": "#", "_": "_", "{": "{", "}": "}", ",": " ", ";": " ",
    ":": " ", "!": "", " ": " ", "(": "", ")": "", "[": "", "]": "", "\\": " ",
}  # fmt: skip


def readable_latex(text: str) -> str:
    """``text`` with its LaTeX as readable characters (see the module docstring).

    >>> readable_latex(r"What is $\\overline{BC}$ if $\\angle A = 90^\\circ$ and $x \\leq \\frac{1}{2}$?")
    'What is B̅C̅ if ∠ A = 90° and x ≤ 1/2?'
    >>> readable_latex("She sells eggs for $2 each and $3 a dozen.")  # money, not math
    'She sells eggs for $2 each and $3 a dozen.'
    >>> readable_latex(r"So $x = \\frac{3}{4} \\cdot 2$, i.e. \\boxed{1.5}")
    'So x = 3/4 · 2, i.e. 1.5'
    """
    if "$" not in text and "\\" not in text:
        return text
    return _convert(_MATH_DOLLARS.sub(_unwrap_math, text), 0)


# a $…$ or $$…$$ span; it is math, not two prices, unless it holds prose ("$2 each and $")
_MATH_DOLLARS = re.compile(r"\$\$([^$]{0,2000})\$\$|(?<!\\)\$([^$\n]{1,2000})(?<!\\)\$")
_PROSE = re.compile(r"[A-Za-z]{3,}[ ,]+[A-Za-z]{2,}")


def _unwrap_math(m: re.Match) -> str:
    inner = m.group(1) if m.group(1) is not None else m.group(2)
    money = inner[:1].isdigit() and inner[-1:].isspace()  # "$5 and $6": two prices
    return m.group() if money or _PROSE.search(re.sub(r"\\[A-Za-z]+", "", inner)) else inner


def _arg(s: str, i: int) -> tuple[str, int]:
    """The argument at ``s[i:]``: a braced group (its inside) or one character; and the index after it."""
    while i < len(s) and s[i] == " ":
        i += 1
    if i >= len(s):
        return "", i
    if s[i] != "{":
        m = _CMD.match(s, i) if s[i] == "\\" else None
        return (m.group(), m.end()) if m else (s[i], i + 1)
    depth, j = 0, i
    while j < len(s):
        if s[j] == "{":
            depth += 1
        elif s[j] == "}":
            depth -= 1
            if depth == 0:
                return s[i + 1 : j], j + 1
        j += 1
    return s[i + 1 :], len(s)  # unclosed: the rest


def _wrap(x: str) -> str:
    x = x.strip()
    plain = len(x) <= 1 or x.lstrip("√-").replace(".", "").isalnum()
    return x if plain or (x[0] == "(" and x[-1] == ")") else f"({x})"


def _command(name: str, s: str, i: int, depth: int) -> tuple[str, int]:
    """What command ``name`` (its arguments start at ``s[i]``) reads as, and the index after it."""
    if name in _FRACS:
        a, i = _arg(s, i)
        b, i = _arg(s, i)
        return f"{_wrap(_convert(a, depth + 1))}/{_wrap(_convert(b, depth + 1))}", i
    if name == "sqrt":
        if i < len(s) and s[i] == "[":  # \sqrt[3]{x}: the index before the root
            end = s.find("]", i)
            index, i = (s[i + 1 : end], end + 1) if end > 0 else ("", i)
            a, i = _arg(s, i)
            return f"{index}√{_wrap(_convert(a, depth + 1))}", i
        a, i = _arg(s, i)
        return f"√{_wrap(_convert(a, depth + 1))}", i
    if name in _OVER:
        a, i = _arg(s, i)
        return "".join(c + ("\u0305" if c.strip() else "") for c in _convert(a, depth + 1)), i
    if name in _WRAPPERS:
        a, i = _arg(s, i)
        return _convert(a, depth + 1), i
    return _SYMBOLS.get(name, name), i


def _convert(s: str, depth: int) -> str:
    if depth > MAX_DEPTH:
        return s.replace("{", "").replace("}", "")
    out: list[str] = []
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c == "\\":
            m = _CMD.match(s, i)
            if m is None:  # a backslash at the very end
                i += 1
                continue
            text, i = _command(m.group(1), s, m.end(), depth)
            if text[:1].isalpha() and out and out[-1][-1:].isalpha():
                out.append(" ")  # "\pi r" stays two words; "2\pi" stays one
            out.append(text)
        elif c == "^" and s.startswith(("^\\circ", "^{\\circ}"), i):
            out.append("°")
            i += 6 if s.startswith("^\\circ", i) else 8
        elif c in "{}":
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)
