"""``o3viz.plugins.Registry``: options read from a factory's keyword-only arguments and docstring,
values typed from CLI strings or Python values, one-line errors, duplicates refused, the help
generated."""

from __future__ import annotations

from typing import Literal

import pytest

from o3viz.errors import UsageError
from o3viz.plugins import MAX_OPTION_CHARS, REQUIRED, Registry, parse_pairs

pytestmark = [pytest.mark.light]


def make_widget(
    host: str,
    *,
    size: int,
    ratio: float = 0.5,
    loud: bool = False,
    label: str | None = None,
    shape: Literal["round", "square"] = "round",
) -> dict:
    """A widget for the tests.

    size: how many parts
    ratio: a share of the parts,
        from 0 to 1
    loud: whether it shouts
    """
    return {"host": host, "size": size, "ratio": ratio, "loud": loud, "label": label, "shape": shape}


@pytest.fixture
def reg() -> Registry:
    r = Registry("widget")
    r.register("widget", make_widget, "a test widget")
    return r


def test_options_come_from_the_signature_and_the_docstring(reg):
    opts = {o.name: o for o in reg.get("widget").options}
    assert list(opts) == ["size", "ratio", "loud", "label", "shape"]  # the positional host is no option
    assert opts["size"].type is int and opts["size"].default is REQUIRED and opts["size"].required
    assert opts["ratio"].help == "a share of the parts, from 0 to 1"  # the indented line joins it
    assert opts["label"].optional and opts["label"].type is str and opts["label"].help == ""
    assert opts["shape"].choices == ("round", "square")
    assert reg.describe() == (
        "widget: a test widget\n"
        "    -V size=int (required): how many parts\n"
        "    -V ratio=float (default 0.5): a share of the parts, from 0 to 1\n"
        "    -V loud=bool (default False): whether it shouts\n"
        "    -V label=str (default None)\n"
        "    -V shape=round|square (default 'round')"
    )


def test_values_are_typed_from_cli_strings_and_defaults_filled(reg):
    got = reg.values(
        "widget", {"size": " 3", "ratio": "0.25", "loud": "yes", "label": "none", "shape": "square"}
    )
    assert got == {"size": 3, "ratio": 0.25, "loud": True, "label": None, "shape": "square"}
    assert reg.values("widget", {"size": 2, "ratio": 1}) == {
        "size": 2, "ratio": 1.0, "loud": False, "label": None, "shape": "round"
    }  # fmt: skip
    assert reg.make("widget", {"size": "1"}, host="h")["host"] == "h"


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ({}, "widget 'widget' needs -V size=… (how many parts)"),
        (
            {"size": "1", "colour": "red"},
            "has no option 'colour'; its options are size, ratio, loud, label, shape",
        ),
        ({"size": "three"}, "option 'size' must be int, not 'three'"),
        ({"size": "1", "ratio": "nan"}, "option 'ratio' must be a finite number"),
        ({"size": "1", "loud": "maybe"}, "option 'loud' must be true or false"),
        ({"size": "1", "shape": "oval"}, "option 'shape' must be one of round, square, not 'oval'"),
        ({"size": True}, "option 'size' must be int, not bool"),
        ({"size": 1, "ratio": float("inf")}, "option 'ratio' must be a finite number"),
        ({"size": None}, "option 'size' can't be empty"),
        ({"size": "1", "label": "x" * (MAX_OPTION_CHARS + 1)}, "longer than"),
    ],
)
def test_bad_values_are_one_line_usage_errors(reg, given, says):
    with pytest.raises(UsageError) as e:
        reg.values("widget", given)
    assert says in str(e.value) and "\n" not in str(e.value)


def test_names_are_unique_and_well_formed_and_options_annotated(reg):
    with pytest.raises(UsageError, match="widget 'widget' is already registered"):
        reg.register("widget", lambda: None, "a second one")
    assert reg.get("widget").factory is make_widget  # the first one stays
    with pytest.raises(UsageError, match="lower-case letters"):
        reg.register("Big Name", lambda: None, "bad name")
    with pytest.raises(UsageError, match="one line of help"):
        reg.register("nohelp", lambda: None, "")

    def untyped(*, size):  # noqa: ANN001, ANN202
        return size

    with pytest.raises(UsageError, match="option 'size' has no type annotation"):
        reg.register("untyped", untyped, "no annotation")

    def listy(*, sizes: list) -> None: ...

    with pytest.raises(UsageError, match="must be annotated bool, int, float, str"):
        reg.register("listy", listy, "a list option")
    assert reg.names() == ("widget",)
    with pytest.raises(UsageError, match="no widget named 'nope'; the widgets are widget"):
        reg.get("nope")
    reg.unregister("widget")
    reg.unregister("widget")  # a no-op the second time
    assert "widget" not in reg


def test_a_factory_with_var_keywords_passes_the_others_on(reg):
    def both(*, first: str = "widget", **options: object) -> object:
        """first: which plug-in runs after"""
        return reg.make(first, options, host="inner")

    reg.register("both", both, "passes options on")
    assert reg.make("both", {"size": "4"})["size"] == 4
    assert reg.get("both").describe().endswith("-V …: any option of the widget it runs")
    with pytest.raises(UsageError, match="has no option 'colour'"):
        reg.make("both", {"size": "4", "colour": "red"})  # the plug-in that runs refuses it


def test_parse_pairs_reads_a_repeated_flag():
    assert parse_pairs(["a=1", "b = x=y", "c="]) == {"a": "1", "b": " x=y", "c": ""}
    assert parse_pairs(None) == {}
    with pytest.raises(UsageError, match="-V takes key=value, not 'oops'"):
        parse_pairs(["oops"])
    with pytest.raises(UsageError, match="-V a is given twice"):
        parse_pairs(["a=1", "a=2"])
    with pytest.raises(UsageError, match="-P takes key=value"):
        parse_pairs(["=1"], flag="-P")
