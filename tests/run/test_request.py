"""Run settings: one ``RunRequest`` with typed configs and one ``validate``."""

from __future__ import annotations

import dataclasses
import typing

import pytest

from o3viz.compress.context import CompressionConfig
from o3viz.errors import UsageError
from o3viz.run.config import CaptureConfig, DAAConfig, parse_layers, parse_top_k
from o3viz.run.request import RunRequest


@pytest.mark.parametrize(
    "change",
    [
        {"prompt": "  "},
        {"max_new_tokens": 0},
        {"min_new_tokens": -1},
        {"explore": -1},
        {"temperature": 0},
        {"rounds": 0},
        {"confidence_threshold": 1.5},
        {"timeout_s": 0},
        {"capture": CaptureConfig(top_k=0)},
        {"capture": CaptureConfig(layers="some")},
        {"capture": CaptureConfig(layers=[0, "1"])},
        {"capture": CaptureConfig(dtype="int8")},
        {"capture": CaptureConfig(heads=[-1])},
        {"daa": DAAConfig(mode="loud")},
        {"daa": DAAConfig(alpha=2.0)},
    ],
)
def test_validate_refuses_each_setting_that_cannot_run(change):
    RunRequest(prompt="What is 2+3?").validate()
    with pytest.raises(UsageError):
        dataclasses.replace(RunRequest(prompt="What is 2+3?"), **change).validate()


def test_validate_checks_the_compression_settings_too():
    cfg = CompressionConfig()
    cfg.compress_threshold = 0.2  # below the expand threshold, set after construction
    with pytest.raises(UsageError, match="thresholds"):
        RunRequest(prompt="What is 2+3?", compression=cfg).validate()
    with pytest.raises(UsageError, match="thresholds"):
        CompressionConfig(compress_threshold=0.2)


def test_compression_combines_with_every_other_setting():
    """A compressed run uses the one generation loop, so nothing refuses it any more."""
    both = {"compression": CompressionConfig(), "daa": DAAConfig(mode="allocate"), "explore": 2}
    RunRequest(prompt="What is 2+3?", rounds=2, **both).validate()
    RunRequest(task_id="gsm8k:0", **both).validate()


def test_run_request_fields_are_typed():
    hints = typing.get_type_hints(RunRequest)
    assert hints["capture"] is CaptureConfig and hints["daa"] is DAAConfig
    assert hints["compression"] == CompressionConfig | None
    assert typing.Any not in hints.values()


def test_layer_and_top_k_text():
    assert parse_layers(" all ") == "all" and parse_layers("0, 15,-1") == [0, 15, -1]
    assert parse_top_k("all") is None and parse_top_k("64") == 64
    for bad in ("0,x", "first"):
        with pytest.raises(UsageError):
            parse_layers(bad)
    with pytest.raises(UsageError):
        parse_top_k("0")
