"""benchmarks/gpu.py: every variant's sweep validates, and its figures are read as stated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import gpu
from raysweep.config.load import parse_spec
from raysweep.trainables.checks import check_trainable


@pytest.mark.parametrize("variant", gpu.variants(True), ids=lambda v: v.name)
def test_every_variant_is_a_valid_sweep(variant: gpu.Variant) -> None:
    make = gpu.cnn_lstm_config if variant.workload == "cnn_lstm" else gpu.mlp_config
    spec = parse_spec(make(variant, 16.0))
    check_trainable(spec)
    assert spec.resources.gpus_per_trial == variant.fraction
    assert spec.resources.gpu_sharing == variant.sharing
    assert spec.stop.time_budget_s == 16.0


def test_the_plan_has_every_fraction_with_and_without_mps() -> None:
    names = [v.name for v in gpu.variants(True)]
    for fraction in gpu.FRACTIONS:
        assert f"cnn_lstm {fraction:g} GPU time-slice" in names
    assert [n for n in names if "MPS" in n and n.startswith("cnn_lstm")] == [
        "cnn_lstm 0.5 GPU MPS", "cnn_lstm 0.25 GPU MPS", "cnn_lstm 0.125 GPU MPS"
    ]  # fmt: skip
    assert not [v for v in gpu.variants(False) if v.sharing == "mps"]
    quick = gpu.variants(True, quick=True)
    assert {v.workload for v in quick} == {"cnn_lstm"} and len(quick) == 7


def test_steady_rate_counts_ends_after_the_first(tmp_path: Path) -> None:
    events = [{"event": "start", "t": 0.0}] + [{"event": "ended", "t": t} for t in (10, 12, 14)]
    (tmp_path / "trials.jsonl").write_text("\n".join(json.dumps(e) for e in events))
    assert gpu.steady_trials_per_hour(tmp_path) == (3600.0 * 2 / 4, 3)
    events.append({"event": "errored", "t": 30.0})  # a failed trial frees its share too
    (tmp_path / "trials.jsonl").write_text("\n".join(json.dumps(e) for e in events))
    assert gpu.steady_trials_per_hour(tmp_path) == (3600.0 * 3 / 20, 4)
    (tmp_path / "trials.jsonl").write_text(json.dumps({"event": "ended", "t": 1.0}))
    assert gpu.steady_trials_per_hour(tmp_path) == (None, 1)


def test_targets_are_ratios_within_one_run() -> None:
    def row(rate: float, util: float) -> dict[str, dict[str, float]]:
        return {"steady_trials_per_hour": {"median": rate}, "gpu_util_mean": {"median": util}}

    table = {
        "cnn_lstm 1 GPU time-slice": row(100.0, 10.0),
        "cnn_lstm 0.125 GPU time-slice": row(400.0, 60.0),
        "cnn_lstm 0.125 GPU MPS": row(600.0, 90.0),
    }
    _, targets = gpu._targets(table)
    assert [t["value"] for t in targets] == [6.0, 90.0, 1.5]
    assert "cnn_lstm 0.125 GPU MPS" in targets[0]["name"]
