"""Plotly figure builders for the app: each takes trace data and returns a ``go.Figure``; none
imports streamlit, so all are tested (and usable in notebooks) without the app."""

from o3viz.figures._style import (
    SELECT_COLOR,
    STEP_TYPE_COLORS,
    STEP_TYPE_LABELS,
    VERDICT_COLORS,
    clip_label,
    counted,
    readable,
    warm_figures,
)
from o3viz.figures.answer_dataset import answer_dataset_figure
from o3viz.figures.answer_lane import AnswerLane, LaneMark, LanePoint, answer_facts, lane_of
from o3viz.figures.attention import (
    MAX_TOKEN_ROWS,
    layer_head_heatmap,
    relevance_figure,
    token_heatmap,
)
from o3viz.figures.branch import branch_answers_figure
from o3viz.figures.compare import alignment_figure, compare_maps, curves_figure, diff_heatmap, verdicts_figure
from o3viz.figures.compression import (
    build_compression_map,
    build_memory_chart,
    build_prompt_strip,
    build_score_trace,
    changed_segments,
    compression_map_data,
)
from o3viz.figures.dataset import (
    claim_rates_figure,
    first_wrong_figure,
    importance_figure,
    length_figure,
    rates_figure,
    type_mix_figure,
)
from o3viz.figures.details import (
    NodeDetails,
    node_details,
    share_bar,
    step_decisions,
    step_targets,
    token_attention,
    token_facts,
)
from o3viz.figures.episode_map import count_marks, episode_map_figure, episode_span
from o3viz.figures.export import figure_html
from o3viz.figures.importance import (
    head_kurtosis_figure,
    importance_scores_figure,
    record_label,
    resample_interval_figure,
    step_matrix_figure,
)
from o3viz.figures.labels import label_rows, mark_labels
from o3viz.figures.map_layout import Fork
from o3viz.figures.outline import (
    check_item,
    episode_item,
    episode_items,
    outline_items,
    round_items,
    step_item,
)
from o3viz.figures.paired import paired_accuracy_figure, paired_measures_figure
from o3viz.figures.reasoning_map import answer_label, map_layout, reasoning_map_figure
from o3viz.figures.routing_lens import (
    answer_depth_summary,
    coactivation_figure,
    expert_load_figure,
    lens_grid_figure,
    lens_window_start,
    routing_diff_figure,
    routing_entropy_figure,
    routing_heatmap,
    routing_source_note,
    step_routing_figure,
    token_routing_rows,
)
from o3viz.figures.steering import steering_figure
from o3viz.figures.step_attention import is_sink, step_attention, step_attention_heatmap
from o3viz.figures.tokens import claims_html, escape_markdown, tokens_html
from o3viz.figures.verification import check_rows, checks_figure

__all__ = [
    "AnswerLane",
    "LaneMark",
    "LanePoint",
    "lane_of",
    "answer_facts",
    "answer_dataset_figure",
    "warm_figures",
    "paired_accuracy_figure",
    "paired_measures_figure",
    "steering_figure",
    "label_rows",
    "mark_labels",
    "branch_answers_figure",
    "Fork",
    "episode_items",
    "check_item",
    "episode_item",
    "round_items",
    "step_item",
    "count_marks",
    "episode_map_figure",
    "episode_span",
    "token_facts",
    "head_kurtosis_figure",
    "importance_scores_figure",
    "resample_interval_figure",
    "record_label",
    "step_matrix_figure",
    "step_targets",
    "claim_rates_figure",
    "first_wrong_figure",
    "importance_figure",
    "length_figure",
    "rates_figure",
    "type_mix_figure",
    "build_prompt_strip",
    "changed_segments",
    "compression_map_data",
    "compare_maps",
    "is_sink",
    "step_attention",
    "step_attention_heatmap",
    "answer_depth_summary",
    "coactivation_figure",
    "expert_load_figure",
    "lens_grid_figure",
    "lens_window_start",
    "routing_diff_figure",
    "routing_entropy_figure",
    "routing_heatmap",
    "routing_source_note",
    "step_routing_figure",
    "token_routing_rows",
    "share_bar",
    "step_decisions",
    "token_attention",
    "answer_label",
    "map_layout",
    "outline_items",
    "reasoning_map_figure",
    "STEP_TYPE_COLORS",
    "STEP_TYPE_LABELS",
    "SELECT_COLOR",
    "VERDICT_COLORS",
    "build_compression_map",
    "build_memory_chart",
    "build_score_trace",
    "MAX_TOKEN_ROWS",
    "NodeDetails",
    "alignment_figure",
    "check_rows",
    "checks_figure",
    "claims_html",
    "clip_label",
    "counted",
    "readable",
    "curves_figure",
    "diff_heatmap",
    "escape_markdown",
    "figure_html",
    "layer_head_heatmap",
    "node_details",
    "relevance_figure",
    "token_heatmap",
    "tokens_html",
    "verdicts_figure",
]
