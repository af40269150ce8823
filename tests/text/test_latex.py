"""LaTeX made readable (o3viz.text.latex): names and one-line questions never show raw LaTeX
("$\\overline{BC}$") nor mangled LaTeX ("\\overlineBC"); money stays money; code stays code."""

from __future__ import annotations

import pytest

from o3viz.figures._style import readable
from o3viz.importers.bulk import trace_name
from o3viz.text.latex import readable_latex


@pytest.mark.parametrize(
    ("tex", "text"),
    [
        (r"$\overline{BC}$", "B̅C̅"),
        (r"If $f(x) = \frac{3x-2}{x-2}$, what is", "If f(x) = (3x-2)/(x-2), what is"),
        (r"\left( 3, \frac{\pi}{2} \right)", "( 3, π/2 )"),
        (r"\frac{\sqrt{3}}{2}", "√3/2"),
        (r"$x \leq 5$ and $y \geq 2$", "x ≤ 5 and y ≥ 2"),  # \leq is not \le + "q"
        (r"$90^\circ$", "90°"),
        (r"\text{Evelyn}", "Evelyn"),
        ("She sells them for $2 each and $3 a dozen.", "She sells them for $2 each and $3 a dozen."),
        ("def f(x): return {x: 1}", "def f(x): return {x: 1}"),
    ],
)
def test_latex_reads_as_text(tex, text):
    assert readable_latex(tex) == text


def test_figures_and_names_use_the_one_converter():
    q = r"In triangle $ABC$, what is the length of $\overline{BC}$?"
    assert readable(q) == "In triangle ABC, what is the length of B̅C̅?"
    assert "overline" not in trace_name(3, "", q) and "$" not in trace_name(3, "", q)


def test_deep_nesting_is_bounded():
    deep = "\\frac{" * 5000 + "1" + "}{2}" * 5000
    assert "1" in readable_latex(deep)
