"""o3viz.app: what the Streamlit pages use from the library, as real imports an editor can follow.

The pages import from here (and from ``o3viz.figures`` for the Plotly builders), never from the
modules below directly, so this file is the one list of what the app depends on. Everything here is
light: importing it loads neither torch nor transformers. What runs a model (runs, branches,
importance, steering) is in ``o3viz.app.running``, imported only by the pages that run things; the
sample tree, its figure and its sampling jobs are in ``o3viz.app.sampling`` (the Samples page).
The session library, the background workers and the upload staging live in this package too
(``library``, ``jobs``, ``worker``, ``uploads``, ``messages``); none of them imports streamlit.
"""

from __future__ import annotations

from o3viz.analysis.answer_dataset import AnswerRows, answer_rows
from o3viz.analysis.answer_measures import MEASURES as ANSWER_MEASURES
from o3viz.analysis.compare import branch_step_offset, compare_traces, same_question, shown_delta
from o3viz.analysis.dataset import COLUMNS as DATASET_COLUMNS
from o3viz.analysis.dataset import OUTLIER_RULE, dataset_summary, rate_text
from o3viz.analysis.dataset import frame as dataset_frame
from o3viz.analysis.dataset import select as select_rows
from o3viz.analysis.episodes import OVERVIEW_FROM, episode_of, episode_outline, find_episodes
from o3viz.analysis.grade_choice import GRADE_LABELS, GRADED_BY, GRADES
from o3viz.analysis.graph import build_graph
from o3viz.analysis.outline import build_outline, search_outline
from o3viz.analysis.paired import PairedCompareRequest, Side
from o3viz.analysis.provenance import (
    disagreement_line,
    grading,
    limit_line,
    proxy_line,
    stopped_at_limit,
    trace_label,
)
from o3viz.analysis.steering import steering_pair
from o3viz.analysis.summary import summarize
from o3viz.analysis.verdicts import first_wrong_by, step_verdicts, verifier_names
from o3viz.analysis.wrong_step import first_wrong_step, reference_last_held
from o3viz.app.exports import label_export
from o3viz.app.headers import SecurityHeaders
from o3viz.app.inspect_view import PLOTLY_JS, VIEW_STATIC, ViewFigure, figure_view_data, inspect_view_data
from o3viz.app.jobs import BranchJob, ImportJob, Progress, RunJob, TraceJob
from o3viz.app.library import (
    STORE_COLUMNS,
    UPLOAD_TYPES,
    LibraryEntry,
    StoreLibrary,
    display_name,
    run_name,
    store_entry,
    store_rows,
    stored_entries,
)
from o3viz.app.messages import explain_load_error
from o3viz.app.page_base import PageBase, plotly_loader
from o3viz.app.uploads import ImportOutcome, Upload, import_outcome, take_upload_in_worker
from o3viz.compress.context import CompressionConfig
from o3viz.errors import O3vizError, UsageError, one_line
from o3viz.importers.bulk import ImportOptions
from o3viz.importers.parallel import import_dataset
from o3viz.importers.preview import ROLES as FIELD_ROLES
from o3viz.importers.preview import ImportPreview, preview_import
from o3viz.paths import home_dir, samples_dir
from o3viz.run.sizing import storage_note
from o3viz.run.speed import SpeedLog
from o3viz.samples.request import MAX_SAMPLES, SampleRequest, new_set_name
from o3viz.samples.sets import SampleSet, SetSummary, list_sets, read_set
from o3viz.store.columnar import select_frame
from o3viz.store.golden import dataset_agreement, label_queue, labels_on
from o3viz.store.index import STEP_TYPES
from o3viz.store.labels import Label, add_labels, label_count
from o3viz.store.paired import compare_datasets, dataset_models, paired_rows
from o3viz.store.query import MAX_PAGE, Query
from o3viz.store.repair import ensure_samples
from o3viz.store.store import Store, content_key
from o3viz.store.successors import successor
from o3viz.tasks.spec import load_task
from o3viz.trace import Trace
from o3viz.trace.ids import make_id, parse_id, parse_index, parse_step_ref, step_ref
from o3viz.verify.sandbox.run import available_isolation, describe_isolation
from o3viz.verify.trace_checks import check_label

__all__ = [
    "MAX_SAMPLES",
    "SampleRequest",
    "SampleSet",
    "SetSummary",
    "list_sets",
    "new_set_name",
    "read_set",
    "PageBase",
    "plotly_loader",
    "SecurityHeaders",
    "PLOTLY_JS",
    "VIEW_STATIC",
    "ViewFigure",
    "figure_view_data",
    "inspect_view_data",
    "SpeedLog",
    "BranchJob",
    "CompressionConfig",
    "ANSWER_MEASURES",
    "AnswerRows",
    "DATASET_COLUMNS",
    "FIELD_ROLES",
    "GRADES",
    "GRADE_LABELS",
    "GRADED_BY",
    "ImportJob",
    "ImportOptions",
    "ImportOutcome",
    "ImportPreview",
    "Label",
    "LibraryEntry",
    "MAX_PAGE",
    "O3vizError",
    "OUTLIER_RULE",
    "OVERVIEW_FROM",
    "PairedCompareRequest",
    "Progress",
    "Query",
    "RunJob",
    "STEP_TYPES",
    "STORE_COLUMNS",
    "Side",
    "Store",
    "StoreLibrary",
    "Trace",
    "TraceJob",
    "UPLOAD_TYPES",
    "Upload",
    "UsageError",
    "add_labels",
    "available_isolation",
    "build_graph",
    "build_outline",
    "check_label",
    "compare_datasets",
    "compare_traces",
    "content_key",
    "dataset_agreement",
    "answer_rows",
    "dataset_frame",
    "dataset_models",
    "dataset_summary",
    "describe_isolation",
    "disagreement_line",
    "display_name",
    "ensure_samples",
    "episode_of",
    "episode_outline",
    "explain_load_error",
    "find_episodes",
    "first_wrong_by",
    "first_wrong_step",
    "reference_last_held",
    "branch_step_offset",
    "step_verdicts",
    "storage_note",
    "verifier_names",
    "grading",
    "home_dir",
    "import_dataset",
    "import_outcome",
    "label_count",
    "label_export",
    "label_queue",
    "labels_on",
    "limit_line",
    "load_task",
    "make_id",
    "one_line",
    "paired_rows",
    "parse_id",
    "parse_index",
    "parse_step_ref",
    "preview_import",
    "proxy_line",
    "rate_text",
    "run_name",
    "same_question",
    "samples_dir",
    "search_outline",
    "select_frame",
    "select_rows",
    "shown_delta",
    "steering_pair",
    "step_ref",
    "stopped_at_limit",
    "store_entry",
    "store_rows",
    "stored_entries",
    "successor",
    "summarize",
    "take_upload_in_worker",
    "trace_label",
]
