"""Shared test fixtures (paths to the project, its samples and ../shared/data) and the test tiers
(markers model, server, browser, subprocess, and light for none of them: `make check` runs light)."""

from __future__ import annotations

import fnmatch
import multiprocessing.process
import os
import subprocess
from pathlib import Path

import pytest

from o3viz.paths import data_dir, samples_dir

SHARED_DATA = data_dir()
SAMPLES = samples_dir()

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(autouse=True)
def _private_store(tmp_path_factory, monkeypatch):
    """Every test gets its own trace store: the user's real one (~/.local/share/o3viz) is never touched."""
    monkeypatch.setenv("O3VIZ_HOME", str(tmp_path_factory.mktemp("o3viz_home")))
    # A benchmark run inside a test writes its result file here, never into docs/results/.
    monkeypatch.setenv("O3VIZ_RESULTS_DIR", str(tmp_path_factory.mktemp("results")))


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is absent (it sits beside the project in CI and dev sessions)")
    return SHARED_DATA


def sample_paths() -> list[Path]:
    return sorted(p for p in SAMPLES.glob("*.o3trace.json*"))


@pytest.fixture(scope="module")
def transformers_server(tmp_path_factory):
    """``transformers serve`` of the embedded model on 127.0.0.1 for one test module; yields
    ``(base_url, model_path)`` and stops it when the module ends. Not session-wide: a server left
    running is a child process, and the worker tests check that no child process is left."""
    from o3viz.errors import ModelLoadError
    from o3viz.model import resolve_model
    from o3viz.testing.serve import ServeError, transformers_serve

    try:
        path = resolve_model(None)[0]
    except ModelLoadError as exc:
        pytest.skip(f"embedded model unavailable: {exc}")
    try:
        with transformers_serve(path, tmp_path_factory.mktemp("serve") / "serve.log") as url:
            yield url, path
    except ServeError as exc:
        pytest.fail(str(exc))


# Test tiers ----------------------------------------------------------------------------------
# Each test is in one or more heavy tiers, or in `light` (none of them). `make check` runs the light
# tier; `pytest -m model` (or server, browser, subprocess) runs one tier on its own. A module is put in
# a tier below by its path (a glob under tests/); a single test that differs from its module is named
# in TESTS. A light test that starts a process fails and says which marker it needs.
TIERS = {
    "model": "runs a model: the embedded SmolLM2-135M or a tiny random one",
    "server": "starts or talks to a listening server (Streamlit, transformers serve, a local HTTP stub)",
    "browser": "drives Chromium through Playwright",
    "subprocess": "starts processes: the sandbox, worker processes, the CLI as a program, git",
}
MODULES: dict[str, tuple[str, ...]] = {
    "tests/app/test_browser*.py": ("browser", "server"),
    "tests/*server*.py": ("server",),
    "tests/app/test_app_responsive.py": ("browser", "server"),
    "tests/notebook/test_widget_browser.py": ("browser",),
    "tests/notebook/test_shared_plotly.py": ("browser",),
    "tests/notebook/test_long_view_browser.py": ("browser",),
    "tests/notebook/test_notebook.py": ("browser", "subprocess"),
    "tests/app/test_serving.py": ("server", "subprocess"),
    "tests/analysis/test_importance_dataset_job.py": ("server", "subprocess"),
    "tests/analysis/test_importance_endpoint.py": ("server",),
    "tests/analysis/test_importance_server.py": ("model", "server"),
    "tests/analysis/test_importance_resample.py": ("model", "server"),
    "tests/branch/test_branch_server.py": ("server",),
    "tests/cli/test_branch_cli.py": ("model", "server"),
    "tests/cli/test_importance_cli.py": ("model", "server"),
    "tests/cli/test_importance_dataset_cli.py": ("server", "subprocess"),
    "tests/analysis/test_importance_receiver.py": ("model",),
    "tests/analysis/test_importance_suppression.py": ("model",),
    "tests/hooks/*.py": ("model",),
    "tests/importers/test_enrich.py": ("model",),
    "tests/run/test_capture*.py": ("model",),
    "tests/run/test_compressed.py": ("model",),
    "tests/run/test_steer.py": ("model",),
    "tests/run/test_run_loop.py": ("model", "subprocess"),
    "tests/compress/test_release.py": ("model",),
    "tests/branch/test_branch_core.py": ("model",),
    "tests/cli/test_cli_run.py": ("model",),
    "tests/cli/test_cli_steer.py": ("model",),
    "tests/cli/test_cli_files.py": ("model", "subprocess"),
    "tests/cli/test_cli_info.py": ("model", "subprocess"),
    "tests/test_model.py": ("model",),
    "tests/test_moefy.py": ("model",),
    "tests/verify/test_verifiers.py": ("model", "subprocess"),
    "tests/benchmarks/test_peers.py": ("model", "subprocess"),
    "tests/verify/test_sandbox*.py": ("subprocess",),
    "tests/verify/test_codeverify.py": ("subprocess",),
    "tests/app/test_worker.py": ("subprocess",),
    "tests/store/test_store_reliability.py": ("subprocess",),
    "tests/app/test_uploads.py": ("subprocess",),
    "tests/app/test_app_store.py": ("subprocess",),
    "tests/app/test_app_import_fields.py": ("subprocess",),
    "tests/cli/test_cli_hostile_args.py": ("subprocess",),
    "tests/cli/test_claims_cli.py": ("subprocess",),
    "tests/importers/test_bulk.py": ("subprocess",),
    "tests/importers/test_bounded_reads.py": ("subprocess",),
    "tests/test_package.py": ("subprocess",),
    "tests/analysis/test_importance_intervals_real.py": ("model",),
    "tests/run/test_cut_short.py": ("model",),
    "tests/run/test_api_settings.py": ("model",),
    "tests/run/test_sizing.py": ("model",),
    "tests/cli/test_cli_run_sizing.py": ("model",),
    "tests/importers/test_enrich_sizing.py": ("model",),
    "tests/importers/test_long_enrich*.py": ("model",),
    "tests/cli/test_app_command.py": ("server", "subprocess"),
    "tests/test_gpu_check.py": ("model", "subprocess"),
    "tests/benchmarks/test_long_capture.py": ("model",),
    "tests/app/test_app_verifiers.py": ("model",),
    "tests/app/test_browser_verifiers.py": ("browser", "server", "model"),  # a tiny PRM judges the trace
    "tests/app/test_inspect_branch_parent.py": ("model",),
    "tests/run/test_paired_run.py": ("model",),
    "tests/cli/test_cli_paired_run.py": ("model",),
    "tests/app/test_app_paired_run.py": ("model",),
}
TESTS: dict[str, tuple[str, ...]] = {
    "tests/app/test_app_run.py::test_a_live_run_joins_the_library": ("model",),
    "tests/app/test_app_run.py::test_the_run_page_shows_a_status_from_the_click_and_says_when_a_run_hit_its_limit": (
        "model",
    ),
    "tests/app/test_app_steer.py::test_run_with_and_without_steering_opens_both_in_compare": ("model",),
    "tests/app/test_importance_view.py::test_analysing_with_the_local_model_stores_one_analysed_copy_and_opens_it": (
        "model",
    ),
    "tests/app/test_inspect_branch.py::test_continue_from_here_opens_the_branch_linked_to_its_parent": (
        "model",
    ),
    "tests/compress/test_compress.py::test_bench_compress_without_model_prints_figures": ("subprocess",),
    "tests/verify/test_trace_checks.py::test_capture_checks_the_claims_of_its_round": ("model",),
    "tests/tasks/test_kind.py::test_capture_and_solve_give_a_free_prompt_the_same_kind": ("model",),
    "tests/tasks/test_kind.py::test_solve_keeps_the_answer_and_confidence_capture_stored": ("model",),
    "tests/analysis/test_steering.py::test_both_sides_are_measured_on_the_steered_runs_spans": ("model",),
    "tests/store/test_store.py::test_a_full_disk_gives_one_line": ("subprocess",),
    "tests/store/test_labels.py::test_two_processes_labelling_at_once_lose_nothing": ("subprocess",),
    "tests/importers/test_inspect_logs.py::test_eval_log_is_one_trace_per_sample_with_reasoning_blocks_as_steps": (
        "subprocess",
    ),
    "tests/cli/test_import_shapes_cli.py::test_gsm8k_test_file_imports_every_record": ("subprocess",),
    "tests/cli/test_store_keys_cli.py::test_importance_takes_a_key": ("model",),
    "tests/app/test_app.py::test_a_bad_upload_shows_one_clear_error_and_the_good_one_still_loads": (
        "subprocess",
    ),
    "tests/app/test_app.py::test_browsing_every_page_and_view_never_loads_a_model": ("subprocess",),
}
ROOT = Path(__file__).resolve().parents[1]


def pytest_configure(config):
    for name, what in TIERS.items():
        config.addinivalue_line("markers", f"{name}: {what}")
    config.addinivalue_line("markers", "light: needs none of model, server, browser, subprocess (make check)")


def _tiers_of(item) -> set[str]:
    rel = Path(str(item.fspath)).resolve().relative_to(ROOT).as_posix()
    found = {t for glob, tiers in MODULES.items() if fnmatch.fnmatch(rel, glob) for t in tiers}
    name = getattr(item, "originalname", None) or item.name
    found |= set(TESTS.get(f"{rel}::{name}", ()))
    return found


def pytest_collection_modifyitems(config, items):
    for item in items:
        for tier in sorted(_tiers_of(item)):
            item.add_marker(tier)
        if not any(item.get_closest_marker(t) for t in TIERS):
            item.add_marker("light")


@pytest.fixture(autouse=True)
def _light_starts_no_process_or_model(request, monkeypatch):
    """Under `-m light` (make check), a light test that starts a process or builds a model fails
    and names the marker it needs, so the fast loop stays fast and its tiers stay true."""
    if (
        request.node.get_closest_marker("light") is None
        or (request.config.option.markexpr or "").strip() != "light"
    ):
        return

    def refuse(what: str, tier: str):
        def fail(*args, **kwargs):
            pytest.fail(f"{request.node.nodeid} {what}: mark it `{tier}` (tests/conftest.py)", pytrace=False)

        return fail

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse("starts a process", "subprocess"))
    monkeypatch.setattr(
        multiprocessing.process.BaseProcess, "start", refuse("starts a process", "subprocess")
    )
    from transformers import modeling_utils

    monkeypatch.setattr(modeling_utils.PreTrainedModel, "post_init", refuse("builds a model", "model"))


def pytest_ignore_collect(collection_path, config):
    """Under `-m light` (make check), modules whose every test is in a heavy tier are not even
    imported: collecting them would cost more than the light tests themselves."""
    if (config.option.markexpr or "").strip() != "light" or collection_path.suffix != ".py":
        return None
    try:
        rel = collection_path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return None
    return True if any(fnmatch.fnmatch(rel, glob) for glob in MODULES) else None
