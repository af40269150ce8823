"""The outline list beside the reasoning map: an indented, collapsible list (rounds → steps →
checks, or on a long trace rounds → episodes → the open episode's steps) built from
``o3viz.figures.outline_items`` / ``episode_items``. Clicking a row selects that node; the selected
row is highlighted and scrolled into view, so the map and the outline stay in sync both ways.
Every field is set with ``textContent`` (trace text is never parsed as HTML)."""

from __future__ import annotations

import hashlib
import json

import streamlit as st

_CSS = """
.o3-outline { position: relative; overflow-y: auto; font-size: 13px; line-height: 1.35;
  border: 1px solid #e2e8f0; border-radius: 6px; padding: 4px 2px; background: #fff; }
.o3-outline .row { display: flex; gap: 6px; align-items: baseline; padding: 2px 6px; cursor: pointer;
  border-radius: 4px; white-space: nowrap; overflow: hidden; }
.o3-outline .row:hover { background: #f1f5f9; }
.o3-outline .row.sel { background: #fde68a; outline: 1px solid #111827; }  /* the map's selection colour */
.o3-outline summary.row { font-weight: 600; list-style: none; }
.o3-outline summary.row::-webkit-details-marker { display: none; }
.o3-outline .caret { width: 12px; color: #64748b; cursor: pointer; }
.o3-outline .caret.ep { flex: none; }
.o3-outline .row.episode { font-weight: 500; border-top: 1px solid #f1f5f9; }
.o3-outline .row.episode.open { background: #eef2ff; }
.o3-outline details[open] > summary .caret::before { content: "▾"; }
.o3-outline details:not([open]) > summary .caret::before { content: "▸"; }
.o3-outline .dot { width: 9px; height: 9px; border-radius: 50%; flex: none; transform: translateY(1px); }
.o3-outline .sq { width: 9px; height: 9px; flex: none; transform: translateY(1px); }
.o3-outline .idx { color: #64748b; font-variant-numeric: tabular-nums; min-width: 1.6em; text-align: right; }
.o3-outline .type { color: #475569; font-size: 11px; flex: none; }
.o3-outline .txt { overflow: hidden; text-overflow: ellipsis; flex: 1 1 auto; min-width: 0; }
.o3-outline .mark { color: #7c3aed; flex: none; }
.o3-outline .chip { flex: none; font-size: 11px; font-weight: 600; padding: 0 5px; border-radius: 8px;
  color: #fff; }
"""

_JS = """
function cell(cls, text) { const s = document.createElement('span'); s.className = cls;
  if (text !== undefined) s.textContent = text; return s; }
function build(root, rows) {
  root.replaceChildren();
  let group = null;
  for (const r of rows) {
    const row = document.createElement(r.depth === 0 ? 'summary' : 'div');
    row.className = 'row ' + r.kind; row.dataset.id = r.id; row.title = r.title || '';
    if (r.depth === 0) {
      row.append(cell('caret'), cell('txt', r.text));
      const chip = cell('chip', r.chip); chip.style.background = r.color; row.append(chip);
      group = document.createElement('details'); group.open = true; group.append(row); root.append(group);
      continue;
    }
    row.style.paddingLeft = (6 + 14 * r.depth) + 'px';
    if (r.kind === 'episode') {
      const sq = cell('sq'); sq.style.background = r.color;
      row.append(cell('caret ep', r.open ? '▾' : '▸'), cell('idx', 'E' + r.index), sq, cell('type', r.type));
      if (r.mark) row.append(cell('mark', r.mark));
      row.append(cell('txt', r.text));
      if (r.chip) { const chip = cell('chip', r.chip); chip.style.background = r.chip_color; row.append(chip); }
      if (r.open) row.classList.add('open');
    } else if (r.kind === 'step') {
      const dot = cell('dot'); dot.style.background = r.color;
      row.append(cell('idx', String(r.index)), dot, cell('type', r.type));
      if (r.mark) row.append(cell('mark', r.mark));
      row.append(cell('txt', r.text));
      if (r.chip) row.append(cell('type', r.chip));
    } else {
      const sq = cell('sq'); sq.style.background = r.color;
      row.append(sq, cell('txt', r.text));
      const chip = cell('chip', r.chip); chip.style.background = r.color; row.append(chip);
    }
    (group || root).append(row);
  }
}
export default function(component) {
  const { data, setTriggerValue, parentElement } = component;
  let root = parentElement.querySelector('.o3-outline');
  if (!root) { root = document.createElement('div'); root.className = 'o3-outline';
    root.setAttribute('data-testid', 'o3-outline'); parentElement.append(root); }
  root.style.height = data.height + 'px';
  if (root.dataset.sig !== data.sig) { root.dataset.sig = data.sig; build(root, data.rows); }
  root.onclick = (e) => {
    const row = e.target.closest('[data-id]');
    if (!row) return;
    if (row.tagName === 'SUMMARY') { if (e.target.closest('.caret')) return; e.preventDefault(); }
    setTriggerValue('select', row.dataset.id);
  };
  root.querySelectorAll('.sel').forEach((x) => x.classList.remove('sel'));
  const sel = data.selected ? root.querySelector('[data-id="' + CSS.escape(data.selected) + '"]') : null;
  if (sel) {
    sel.classList.add('sel');
    const det = sel.closest('details'); if (det) det.open = true;
    const top = sel.offsetTop;
    if (top < root.scrollTop || top > root.scrollTop + root.clientHeight - 24)
      root.scrollTop = Math.max(0, top - root.clientHeight / 3);
  }
}
"""

_outline = st.components.v2.component("o3viz.outline", css=_CSS, js=_JS)


def outline_list(
    rows: list[dict], selected: str | None, *, key: str, height: int = 420, on_select=None
) -> str | None:
    """Draw the outline; ``on_select`` runs (before the rerun) when a row is clicked, and the
    clicked id is ``st.session_state[key]["select"]``. Returns that id in the run it was clicked."""
    sig = hashlib.sha1(json.dumps(rows, sort_keys=True).encode()).hexdigest()[:16]
    result = _outline(
        data={"rows": rows, "selected": selected, "height": height, "sig": sig},
        key=key,
        on_select_change=on_select or (lambda: None),
    )
    picked = getattr(result, "select", None)
    return picked if isinstance(picked, str) else None
