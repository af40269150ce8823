"""Labelling on Inspect: the three verdict buttons (and the keys ``c`` ``w`` ``u``, ``n`` for the
next step) under the selected step's header in the details panel, the labeller's name asked once per
session, and the glyphs that mark labelled steps on the map and in the outline.

Streamlit reserves ``C`` and ``R`` for its own hotkeys, so ``st.button(shortcut=...)`` cannot take
``c``: a small key listener (a ``st.components.v2`` component, as the outline is) sends the four
letters instead, and ignores them while a text box has the focus."""

from __future__ import annotations

import streamlit as st

from o3viz.app import Label, O3vizError, add_labels, labels_on, make_id, parse_id
from o3viz.figures import escape_markdown, label_rows, mark_labels
from pages.common.ui import select_node, store

KEYS = {"c": "correct", "w": "wrong", "u": "unsure"}
GLYPHS = {"correct": "✓", "wrong": "✗", "unsure": "?"}  # short: the panel is narrow

_JS = """
export default function(component) {
  const { setTriggerValue, parentElement } = component;
  const win = parentElement.ownerDocument.defaultView;
  if (win.__o3LabelKeys) win.removeEventListener('keydown', win.__o3LabelKeys, true);
  win.__o3LabelKeys = (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || e.repeat) return;
    const t = e.target, tag = (t && t.tagName) || '';
    if (tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT' || (t && t.isContentEditable)) return;
    const k = (e.key || '').toLowerCase();
    if (!['c', 'w', 'u', 'n'].includes(k)) return;
    e.preventDefault(); e.stopImmediatePropagation();  // before Streamlit's own "c" (clear caches)
    setTriggerValue('key', k);
  };
  win.addEventListener('keydown', win.__o3LabelKeys, true);
}
"""

_keys = st.components.v2.component("o3viz.label_keys", js=_JS)


def _mine(key: str) -> dict[str, str]:
    """Node id → verdict of this session's labeller on the trace (everyone's, before a name)."""
    name = st.session_state.labeller
    try:
        labels = labels_on(store(), key)
    except O3vizError:
        return {}
    return {make_id("step", x.round, x.step): x.verdict for x in labels if name is None or x.labeller == name}


def marked_rows(rows: list[dict]) -> list[dict]:
    """The outline's rows with the labelled steps marked (Inspect's map view calls it)."""
    key = st.session_state.inspect_key
    return label_rows(rows, _mine(key)) if key else rows


def marked_map(fig):
    """The reasoning map with a glyph above every labelled step."""
    key = st.session_state.inspect_key
    return mark_labels(fig, _mine(key)) if key else fig


def _next(trace, r: int, i: int) -> None:
    """Select the step after (round r, step i), the first of the next round after a round's last."""
    order = [(rnd.index, st_.index) for rnd in trace.rounds for st_ in rnd.steps]
    at = order.index((r, i)) if (r, i) in order else -1
    if at + 1 < len(order):
        select_node(make_id("step", *order[at + 1]))


def _label(key: str, trace, r: int, i: int, verdict: str) -> None:
    try:
        add_labels(store(), [Label(key, r, i, st.session_state.labeller, verdict)])
    except O3vizError as exc:
        st.session_state.label_error = str(exc)


def _on_key(widget: str, key: str, trace) -> None:
    """A key press: it acts on the step selected now (a press that arrives while the page reruns
    acts on the step the previous press moved to, never on the one drawn before)."""
    k = (st.session_state.get(widget) or {}).get("key")
    node = parse_id(st.session_state.inspect_node)
    if node is None or node.kind != "step":
        return
    if k == "n":
        _next(trace, node.round, node.index)
    elif k in KEYS:
        _label(key, trace, node.round, node.index, KEYS[k])


def _ask_name() -> None:
    with st.form("labeller_form", border=False, enter_to_submit=True):
        a, b = st.columns([1, 1], vertical_alignment="bottom")  # room for the whole button label
        name = a.text_input("Your name, to label steps", max_chars=100, key="labeller_input")
        if b.form_submit_button("Start labelling") and name.strip():
            st.session_state.labeller = name.strip()
            st.rerun()


def label_controls(trace, s) -> None:
    """The verdict buttons for step ``s`` (an outline step) of the trace open on Inspect."""
    key = st.session_state.inspect_key
    if key is None or parse_id(s.id) is None:
        return
    if not st.session_state.labeller:
        _ask_name()
        return
    r, i = s.round, s.index
    cols = st.columns(4, gap="small")
    for col, (letter, verdict) in zip(cols, KEYS.items(), strict=False):
        col.button(f"{GLYPHS[verdict]} {letter}", key=f"lab_{letter}_{key}_{r}_{i}", help=f"{verdict} (key {letter})",
                   on_click=_label, args=(key, trace, r, i, verdict), width="stretch")  # fmt: skip
    cols[3].button("→ n", key=f"lab_n_{key}_{r}_{i}", help="the next step (key n)",
                   on_click=_next, args=(trace, r, i), width="stretch")  # fmt: skip
    widget = f"label_keys_{key}"
    _keys(key=widget, on_key_change=lambda: _on_key(widget, key, trace))
    if st.session_state.label_error:
        st.error(escape_markdown(st.session_state.label_error), icon=":material/error:")
        st.session_state.label_error = None
    here = [x for x in labels_on(store(), key) if (x.round, x.step) == (r, i)]
    said = " · ".join(
        f"{x.labeller}: {x.verdict}" + (" (first error)" if x.first_error else "") for x in here
    )
    st.caption(escape_markdown(f"labelling as {st.session_state.labeller}" + (f" · {said}" if said else "")))
