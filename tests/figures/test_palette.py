"""One palette (issue 22, finding 10), read from the figures themselves: every red or green that a
figure, a token view or a page draws is the palette's fail/pass pair; Streamlit's own red and green
are that pair too; low token probability is a tint with no red in it; and the layer × head map's
scale rises in lightness without a dip (and holds no red either)."""

from __future__ import annotations

import colorsys
import json
import re
import tomllib

import numpy as np
import pandas as pd
import plotly.colors as pc
import pytest

from o3viz.app import build_outline, find_episodes
from o3viz.figures import (
    checks_figure,
    claims_html,
    episode_items,
    episode_map_figure,
    layer_head_heatmap,
    length_figure,
    outline_items,
    reasoning_map_figure,
    relevance_figure,
    step_attention_heatmap,
    token_heatmap,
    tokens_html,
    type_mix_figure,
)
from o3viz.figures._style import BAD_COLOR, GOOD_COLOR
from o3viz.figures.importance import head_kurtosis_figure, importance_scores_figure
from o3viz.paths import REPO_ROOT
from o3viz.testing.synthetic import make_trace
from o3viz.trace.io import load_trace

_HEX = re.compile(r"#([0-9a-fA-F]{6})\b")
_RGB = re.compile(r"rgba?\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)")
_NAMED = re.compile(r"""["':;]\s*(red|green|crimson|darkred|firebrick|lime|forestgreen|tomato)\b""")


def _rgb(c: str) -> tuple[int, int, int]:
    m = _HEX.fullmatch(c.strip()) if c.startswith("#") else None
    if m:
        h = m.group(1)
        return tuple(int(h[i : i + 2], 16) for i in (0, 2, 4))  # type: ignore[return-value]
    return tuple(int(x) for x in _RGB.match(c).groups())  # type: ignore[union-attr,return-value]


def _hue(rgb) -> tuple[float, float, float]:
    h, s, v = colorsys.rgb_to_hsv(*(x / 255 for x in rgb))
    return h * 360, s, v


def _is_red(rgb) -> bool:
    h, s, v = _hue(rgb)
    return (h <= 30 or h >= 340) and s >= 0.5 and v >= 0.35


def _is_green(rgb) -> bool:
    h, s, v = _hue(rgb)
    return 80 <= h <= 170 and s >= 0.5 and v >= 0.3


def _colours(text: str) -> list[tuple[int, int, int]]:
    return [_rgb("#" + h) for h in _HEX.findall(text)] + [tuple(map(int, g)) for g in _RGB.findall(text)]


def _drawn(fig) -> str:
    """A figure's JSON without its colour scales and template (scales are tested on their own;
    the template's colourway is Plotly's, not a choice of ours)."""

    def strip(x):
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k not in ("colorscale", "template")}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x

    return json.dumps(strip(fig.to_plotly_json()), default=str)


def _assert_one_red_one_green(text: str, where: str, *, named: bool = True) -> None:
    bad, good = _rgb(BAD_COLOR), _rgb(GOOD_COLOR)
    reds = {c for c in _colours(text) if _is_red(c)}
    greens = {c for c in _colours(text) if _is_green(c)}
    assert reds <= {bad}, f"{where}: reds other than the palette's {BAD_COLOR}: {reds - {bad}}"
    assert greens <= {good}, f"{where}: greens other than the palette's {GOOD_COLOR}: {greens - {good}}"
    assert not (named and _NAMED.findall(text)), f"{where}: a named red/green: {_NAMED.findall(text)}"


@pytest.fixture(scope="module")
def trace():
    return make_trace(14, seed=3, rounds=2)


def _figures(trace):
    outline = build_outline(trace)
    rnd = trace.rounds[-1]
    episodes = find_episodes(outline)
    yield "reasoning map", reasoning_map_figure(outline, selected="step:1:2")
    yield "episode map", episode_map_figure(outline, episodes, selected="step:1:2")
    yield "checks", checks_figure(trace)
    yield "token attention", token_heatmap(rnd, 0, 20)
    yield "layer × head", layer_head_heatmap(rnd, 0, 8)
    yield "DAA relevance", relevance_figure(rnd, 0, 10)
    yield "step attention", step_attention_heatmap(rnd, selected=2)
    sel = json.dumps({"bin": "x"})
    length = pd.DataFrame(
        {"bin": ["1-5", "6-10"], "correct": [3, 6], "wrong": [1, 2], "ungraded": [0, 0], "sel": [sel, sel]}
        | {"accuracy": [0.75, 0.75], "ci_lo": [0.3, 0.4], "ci_hi": [0.95, 0.93], "graded": [4, 8]}
    )
    yield "dataset length", length_figure(length)
    mix = pd.DataFrame(
        {
            "group": ["correct", "wrong"],
            "type": ["plan_generation"] * 2,
            "share": [0.3, 0.5],
            "sel": [sel, sel],
        }
        | {"traces": [3, 2]}
    )
    yield "dataset type mix", type_mix_figure(mix)
    imp = load_trace(REPO_ROOT / "sample_traces" / "gsm8k_word_problem_importance.o3trace.json.gz").rounds[-1]
    yield "importance", importance_scores_figure(imp.importance, imp.steps)
    receiver = next((r for r in imp.importance if r.head_kurtosis is not None), None)
    if receiver is not None:
        yield "receiver heads", head_kurtosis_figure(receiver)


def test_every_red_and_green_a_figure_draws_is_the_palettes_fail_pass_pair(trace):
    seen = set()
    for name, fig in _figures(trace):
        _assert_one_red_one_green(_drawn(fig), name)
        seen |= set(_colours(_drawn(fig)))
    assert _rgb(BAD_COLOR) in seen and _rgb(GOOD_COLOR) in seen  # the test does read verdicts


def test_the_outline_token_and_claim_views_use_only_the_palettes_red_and_green(trace):
    outline = build_outline(trace)
    rows = outline_items(outline) + episode_items(outline, find_episodes(outline), 0)
    _assert_one_red_one_green(json.dumps(rows), "outline rows")
    for rnd in trace.rounds:
        _assert_one_red_one_green(claims_html(rnd), "claims")
        for mode in ("probability", "entropy"):
            _assert_one_red_one_green(tokens_html(rnd, color_by=mode), f"tokens by {mode}")


def test_pages_pick_no_red_or_green_of_their_own_and_streamlits_pair_is_the_palette():
    for page in sorted((REPO_ROOT / "pages").glob("*.py")):
        # Streamlit's named "red"/"green" are fine on pages: the theme below makes them the pair
        _assert_one_red_one_green(page.read_text(encoding="utf-8"), page.name, named=False)
    tabs = (REPO_ROOT / "pages" / "inspect_views" / "tabs.py").read_text(encoding="utf-8")
    assert "Deeper blue = " in tabs and "Red = " not in tabs  # the Tokens tab's key names its colour
    theme = tomllib.loads((REPO_ROOT / ".streamlit" / "config.toml").read_text())["theme"]
    # :red[…], :red-badge[…], st.badge(color="red") and their green twins draw these
    assert theme["redColor"].lower() == BAD_COLOR.lower()
    assert theme["greenColor"].lower() == GOOD_COLOR.lower()


def test_low_token_probability_deepens_a_tint_that_holds_no_red(trace):
    rnd = trace.rounds[-1]
    html = tokens_html(rnd, color_by="probability")
    backgrounds = re.findall(r"background:rgba\((\d+),(\d+),(\d+),([\d.]+)\)", html)
    assert backgrounds
    assert not any(_is_red(tuple(map(int, b[:3]))) for b in backgrounds)
    probs = [float(np.exp(t.logprob)) for t in rnd.tokens if t.logprob is not None]
    alphas = [float(b[3]) for b in backgrounds]
    order = np.argsort(probs)  # the least likely token gets the deepest tint
    assert all(alphas[i] >= alphas[j] for i, j in zip(order, order[1:], strict=False))
    assert len({b[:3] for b in backgrounds}) == 1  # one hue: sequential, not a rainbow


def _lightness(rgb) -> float:
    """CIE L* (0 black … 100 white) of an sRGB colour."""

    def lin(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (lin(x / 255) for x in rgb)
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    return 116 * y ** (1 / 3) - 16 if y > 0.008856 else 903.3 * y


def test_the_layer_by_head_scale_rises_in_lightness_without_a_dip_and_holds_no_red(trace):
    heat = layer_head_heatmap(trace.rounds[-1], 0, 8).data[0]
    scale = [c for _, c in heat.colorscale]
    samples = pc.sample_colorscale([[i / (len(scale) - 1), c] for i, c in enumerate(scale)], 64)
    rgbs = [tuple(round(float(x)) for x in _RGB.match(c).groups()) for c in samples]
    light = [_lightness(c) for c in rgbs]
    assert all(b > a for a, b in zip(light, light[1:], strict=False)), light
    assert not any(_is_red(c) for c in rgbs)
