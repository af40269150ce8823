"""Streamlit helpers shared by the pages: cached loading, the session library (a view of the
persistent trace store), and figures with a standalone-HTML download button. Thin wrappers only;
the logic lives in ``o3viz``."""

from __future__ import annotations

import re
import threading

import streamlit as st

from o3viz.app import (
    LibraryEntry,
    O3vizError,
    Store,
    StoreLibrary,
    Upload,
    content_key,
    display_name,
    ensure_samples,
    home_dir,
    samples_dir,
    store_entry,
    stored_entries,
    successor,
    take_upload_in_worker,
    trace_label,
)
from o3viz.figures import clip_label, escape_markdown, figure_html, warm_figures


@st.cache_resource(max_entries=1, show_spinner="Loading the model (the first load converts it, about 30 s)…")
def get_model(name: str | None = None):
    """The one loaded copy of a model, shared by the Run page and Inspect's "Analyse with the local
    model" (concurrent runs are safe: capture state is per context, MoEfication is per run)."""
    from o3viz.model import load_model

    return load_model(name or None)


@st.cache_resource(max_entries=8)
def _store(root: str) -> Store:
    return Store(root)


def store() -> Store:
    """The trace store at ``home_dir()`` (a bad store stops the page with one line)."""
    s = _store(str(home_dir()))
    try:
        s.count()  # opens the index: a newer schema or an unwritable folder fails here
    except O3vizError as exc:
        st.error(escape_markdown(str(exc)), icon=":material/error:")
        st.stop()
    return s


@st.cache_resource(show_spinner=False)
def warm_figures_once() -> threading.Thread:
    """Once per server process, in the background: plotly's first figure of each kind costs about
    half a second (its validators), which a reader's first Inspect used to pay
    (``o3viz.figures.warm_figures``)."""
    t = threading.Thread(target=warm_figures, name="o3viz-warm-figures", daemon=True)
    t.start()
    return t


def cached_samples() -> tuple[list[LibraryEntry], list[str]]:
    """Put the samples in the store (once per change of the sample folder) and pin them to this
    session, first; returns no entries (they are in the store) and the samples' errors."""
    with st.spinner("Adding the sample traces to the library…"):
        try:
            keys, errors = ensure_samples(store(), samples_dir())
        except O3vizError as exc:
            return [], [str(exc)]
    pin(keys)
    return [], errors


def load_upload(name: str, data: bytes) -> Upload:
    """Take an upload once per session, in a worker process with a time budget, showing progress:
    the worker recognises it, stages a dataset or stores the trace itself (the server never parses
    it), and leaving the page cancels the work."""
    done = st.session_state.upload_results
    key = content_key(data)
    if key not in done:
        bar = st.progress(0.0, text=f"Reading {label(name)}…")

        def show(elapsed: float, budget: float, stage: str) -> None:
            text = f"{label(stage, 80)} · {elapsed:.0f} s of {budget:.0f} s"
            bar.progress(min(elapsed / budget, 1.0), text=escape_markdown(text))

        done[key] = take_upload_in_worker(store(), name, data, on_progress=show)
        bar.empty()
    return done[key]


def add_entries(entries: list[LibraryEntry]) -> None:
    """Store loaded entries (runs, uploads) and pin them to this session; ``e.key`` becomes the
    store's key."""
    keys = []
    for e in entries:
        try:
            e.key = store_entry(store(), e)
        except O3vizError as exc:
            st.error(escape_markdown(f"{e.name}: {exc}"), icon=":material/error:")
            continue
        keys.append(e.key)
    pin(keys)


def pin(keys: list[str]) -> None:
    """Make stored traces this session's (``st.session_state.library``: key -> entry whose trace
    loads on demand), in the order they joined; a key pinned again moves to the end."""
    pins = st.session_state.library
    for entry in stored_entries(store(), keys):
        pins.pop(entry.key, None)
        pins[entry.key] = entry


def library() -> StoreLibrary:
    """Every stored trace by key; iterating gives this session's traces (samples, uploads, runs and
    opened traces, in the order they joined), then the newest others in the store."""
    return StoreLibrary(store(), list(st.session_state.library))


def trace_labels(keys: list[str]) -> dict[str, str]:
    """Each key's picker label (name · source · steps · date · key head), from one index query.
    Streamlit's selectbox sends the chosen option's *label* back and maps it to the first option
    with that label, so two traces with one name would swap silently: labels must be unique, and
    the key's head makes them so."""
    from o3viz.app import MAX_PAGE, Query

    rows = {}
    for i in range(0, len(keys), MAX_PAGE):
        chunk = keys[i : i + MAX_PAGE]
        for r in store().rows(
            Query(keys=chunk, limit=len(chunk)), ("key", "name", "source", "steps", "added_at")
        ):
            rows[r["key"]] = {**r, "name": label(display_name(r.get("name"), r["key"]))}
    return {k: trace_label(rows.get(k, {"key": k})) for k in keys}


def show_figure(fig, key: str, *, download: bool = True, **kwargs):
    """Render a figure and (unless ``download=False``) a button that downloads it as standalone
    HTML (plotly.js inlined)."""
    event = st.plotly_chart(fig, key=key, theme=None, **kwargs)  # the figures carry their own style
    if download and fig.data:  # an empty figure (it says why) has nothing to download
        download_figure(lambda: fig, key)
    return event


def download_figure(build, key: str) -> None:
    """A button that downloads the figure ``build()`` returns as standalone HTML (plotly.js
    inlined); the figure is built and written only when the button is clicked."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", key)
    st.download_button(
        "Download figure (HTML)",
        data=lambda: figure_html(build()),
        file_name=f"o3viz_{safe}.html",
        mime="text/html",
        key=f"dl_{key}",
        on_click="ignore",
        icon=":material/download:",
    )


def need_traces(n: int) -> bool:
    """Say what to do when the library has fewer than ``n`` traces; True when there are enough."""
    if len(library()) >= n:
        return True
    st.info(f"This page needs {n} trace{'s' if n > 1 else ''} in the library: upload one or make a run.")
    st.page_link("pages/library.py", label="Go to the library", icon=":material/folder_open:")
    return False


def require_router() -> None:
    """Run the page through ``app.py``, with the public API only.

    The pages are registered with ``st.Page`` + ``st.navigation`` in ``app.py``; Streamlit then
    ignores the ``pages/`` folder, as documented. But Streamlit (checked on 1.67) decides once
    per server process, before any script ran, that an entry script beside a folder named
    ``pages/`` is a legacy multipage app, and it keeps thinking so until some script calls
    ``st.navigation``. So the very first request after a server start, when it is a page URL such
    as ``/inspect?trace=KEY``, runs that page's script alone: no router, no session defaults.
    There is no public setting that turns the legacy mode off up front (only the private
    ``PagesManager.uses_pages_directory``), and the folder keeps its name (the design card names
    it). So a page that finds no defaults sends the session through the router once
    (``st.switch_page("app.py")``, public); the router's ``st.navigation`` ends the legacy mode
    for the whole process, and the router resumes this page with its query (a shared link must
    survive the detour)."""
    if "library" not in st.session_state:  # the router always declares it (pages/common/state.py)
        script = st.context.url.rsplit("/", 1)[-1].split("?")[0] if st.context.url else ""
        st.session_state._resume = (f"pages/{script}.py" if script else None, st.query_params.to_dict())
        st.switch_page("app.py")


# ----- state that survives page switches and lives in the URL -----------------------------------

VERDICT_BADGE = {"pass": "green", "correct": "green", "fail": "red", "wrong": "red", "error": "orange"}


def url_state(
    params: dict[str, str], *, traces=("trace",), reset: str | None = None, titles=(), echoes=()
) -> bool:
    """Apply the URL's query to session state (``params`` maps a query name to a state key) where
    the URL changed since this session last wrote it: a bookmark or a shared link. Only the
    parameters that changed are applied: Inspect's view moves ``node`` and ``episode`` in the URL
    from the browser, and a click there must not re-apply the other, older ones (a tab switched a
    moment before went back to the one the URL still named). Names in ``traces`` are library keys;
    one that is not in the library gets one line saying so and the page keeps the session's own
    selection (False is returned, so a page can open nothing else). ``view`` must be one of
    ``titles``; a new trace clears the ``reset`` key (the selected node). Names in ``echoes`` are
    the page's own choices (Inspect's open tab): within a session they are applied only with a new
    trace, since a rerun asked for while the page's last URL write was on its way carries the
    URL of before it (a tab switch then went back to the tab the old URL named)."""
    qp = st.query_params
    wanted = {k: qp.get(k) for k in params if qp.get(k)}
    written = st.session_state._url_written or {}
    changed = {k: v for k, v in wanted.items() if written.get(k) != v}
    if written and not any(k in changed for k in traces):
        changed = {k: v for k, v in changed.items() if k not in echoes}
    if not changed:
        return True
    _follow_replaced(changed, wanted, traces)
    st.session_state._url_written = wanted
    missing = [changed[k] for k in traces if k in changed and changed[k] not in library()]
    if missing:
        st.warning(linked_missing(missing[0]), icon=":material/link_off:")
        return False
    for name, value in changed.items():
        state = params[name]
        if name == "view" and value not in titles:
            continue
        if name in traces and reset and value != st.session_state.get(state):
            st.session_state[reset] = None
        st.session_state[state] = value
    return True


def _follow_replaced(changed: dict, wanted: dict, traces) -> None:
    """A linked key whose trace was replaced (verified, given its answers or importance: a new
    key) opens the trace that replaced it, saying so in one line, and the URL names that one."""
    lib = library()
    for k in traces:
        if k in changed and changed[k] not in lib and (found := successor(store(), changed[k])):
            st.info(escape_markdown(found.note), icon=":material/update:")
            changed[k] = wanted[k] = st.query_params[k] = found.key


def sync_url(**params: str | None) -> None:
    """Write the page's state into the URL (only what changed, so the URL is not rewritten each run)."""
    clean = {k: str(v) for k, v in params.items() if v}
    if {k: st.query_params.get(k) for k in params} != {k: clean.get(k) for k in params}:
        for k in params:
            if k in clean:
                st.query_params[k] = clean[k]
            elif k in st.query_params:
                del st.query_params[k]
    st.session_state._url_written = clean


def _copy_pick(widget_key: str, state_key: str, reset: tuple[str, ...]) -> None:
    st.session_state[state_key] = st.session_state[widget_key]
    for k in reset:
        st.session_state[k] = None


def pick_trace(
    label: str,
    state_key: str,
    widget_key: str,
    *,
    reset: tuple[str, ...] = ("inspect_node",),
    container=st,
    collapsed: bool = False,
):
    """A trace selectbox whose choice lives in ``state_key`` (plain session state, so it survives
    page switches; widget state does not). Returns the chosen library key."""
    lib = library()
    keys = list(lib)
    if st.session_state.get(state_key) not in lib:
        st.session_state[state_key] = keys[0]
    if st.session_state[state_key] not in keys:  # a linked trace beyond the shelf: offer it too
        keys.insert(0, st.session_state[state_key])
    labels = trace_labels(keys)
    st.session_state[widget_key] = st.session_state[state_key]
    container.selectbox(
        label,
        keys,
        format_func=labels.__getitem__,
        key=widget_key,
        on_change=_copy_pick,
        args=(widget_key, state_key, reset),
        label_visibility="collapsed" if collapsed else "visible",
    )
    return st.session_state[state_key]


def fmt(value, digits: int = 2) -> str:
    """A value for people: floats rounded, ``None`` as "—"."""
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def verdict_md(verdict: str | None) -> str:
    """A coloured badge in markdown: green pass/correct, red fail/wrong, grey otherwise."""
    label = verdict if verdict and verdict.isalnum() else "no verdict"
    return f":{VERDICT_BADGE.get(verdict or '', 'gray')}-badge[{label}]"


def selected_node() -> str | None:
    """The node selected on Inspect (map, outline, search or URL), shared by every view."""
    return st.session_state.inspect_node


def select_node(node: str | None) -> None:
    st.session_state.inspect_node = node


def show_load_errors(errors: list[str], upload_key: str, *, empty: bool = False) -> None:
    """Each load error once per upload (not again on every rerun): one line a user understands,
    the technical detail in an expander."""
    from o3viz.app import explain_load_error
    from o3viz.figures import escape_markdown

    shown = st.session_state._shown_load_errors
    for err in errors:
        if (upload_key, err) in shown:
            continue
        shown.add((upload_key, err))
        msg = explain_load_error(err, empty=empty)
        st.error(escape_markdown(msg.line), icon=":material/error:")
        with st.expander("Technical detail"):
            st.code(msg.detail, language=None)


CHECK_BADGE = {
    "holds": "green",
    "correct": "green",
    "pass": "green",
    "consistent": "blue",
    "wrong": "red",
    "fail": "red",
}


def check_md(check) -> str:
    """A check as markdown: a badge that says what its verdict means for its rule, its name, and
    what it tested ("consistent with the arithmetic chain" is not "correct")."""
    from o3viz.app import check_label

    badge, tested = check_label(check)
    return f":{CHECK_BADGE.get(badge, 'gray')}-badge[{badge}] **{escape_markdown(check.name)}** · {escape_markdown(tested)}"


def disagreement_note(source, check) -> None:
    """The one sentence every page shows where the two gradings disagree (nothing where they agree)."""
    from o3viz.app import disagreement_line

    line = disagreement_line(source, check)
    if line:
        st.warning(escape_markdown(line), icon=":material/rule:")


def proxy_note(trace, what: str = "attention") -> None:
    """The label of a borrowed signal (a proxy reader's attention or token probabilities), where
    it is drawn; nothing for the writer's own."""
    from o3viz.app import proxy_line

    line = proxy_line(trace, what)
    if line:
        st.caption(":material/info: " + escape_markdown(line[0].upper() + line[1:]) + ".")


# ----- labels: hostile or huge names are cut and escaped wherever they are drawn ----------------

LABEL_CHARS = 60  # a name in a picker, a tile or a message; the full text is in the table


def label(text: object, limit: int = LABEL_CHARS) -> str:
    """``text`` on one line, at most ``limit`` characters (cut with "…"): the one cap for names
    drawn by the pages (a 1 MB model name froze a browser tab). Not escaped: pass it through
    ``escape_markdown`` where markdown renders."""
    return clip_label(text, limit)


def linked_missing(key: str) -> str:
    """The one line for a ``?trace=`` / ``?b=`` key that is not in the library, escaped: the URL is
    anyone's text, and markdown in it must not become a link or an image the browser fetches."""
    return escape_markdown(
        f"The linked trace {label(key, 16)} is not in this session's library; upload it on the "
        "Library page to open it."
    )
