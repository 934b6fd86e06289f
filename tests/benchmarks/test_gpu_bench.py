"""benchmarks/suite/gpu.py: every variant's sweep validates, and its figures are read as stated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from benchmarks.suite import gpu

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


def write_run(run_dir: Path, ends: list[tuple[str, float, str]]) -> None:
    """trials.jsonl and results.json of trials (id, end time, status)."""
    events = [{"event": "start", "trial_id": i, "t": 0.0} for i, _, _ in ends]
    events += [{"event": "errored" if status == "errored" else "ended", "trial_id": i, "t": t}
               for i, t, status in ends]  # fmt: skip
    (run_dir / "trials.jsonl").write_text("\n".join(json.dumps(e) for e in events))
    trials = [{"trial_id": i, "status": status} for i, _, status in ends]
    (run_dir / "results.json").write_text(json.dumps({"trials": trials}))


def test_steady_rate_starts_once_every_slot_completed_a_trial(tmp_path: Path) -> None:
    """Two slots: the rate runs from the 2nd completion; trials the cap stopped do not count."""
    write_run(tmp_path, [("a", 10, "completed"), ("b", 12, "completed"), ("c", 14, "completed"),
                         ("d", 15, "errored"), ("e", 20, "completed"),
                         ("f", 40, "stopped"), ("g", 40, "stopped")])  # fmt: skip
    rate, completed, window = gpu.steady_trials_per_hour(tmp_path, 2)
    assert (completed, window) == (5, (12, 20))
    assert rate == 3600.0 * 3 / 8  # c, d (errored: it frees its share too) and e in 8 s


def test_no_steady_rate_before_two_trials_past_the_slots(tmp_path: Path) -> None:
    """One wave (every trial ending at the cap, as a too-short budget does) gives no rate."""
    write_run(tmp_path, [(f"t{i}", 12.5, "stopped") for i in range(8)])
    assert gpu.steady_trials_per_hour(tmp_path, 8) == (None, 0, None)
    write_run(tmp_path, [("a", 10, "completed"), ("b", 11, "completed"), ("c", 12, "completed")])
    assert gpu.steady_trials_per_hour(tmp_path, 2) == (None, 3, None)  # 4 needed
    assert gpu.steady_trials_per_hour(tmp_path, 1)[0] == 3600.0 * 2 / 2


def test_gpu_utilisation_is_the_mean_in_the_steady_window(tmp_path: Path) -> None:
    samples = [
        {"t": t, "gpus": [{"util_pct": u}]} for t, u in ((1, 0), (12, 80), (16, 90), (30, 5))
    ]
    samples.append({"t": 18, "n": 2, "gpus": [{"util_pct": 100}]})  # two raw samples merged
    usage = {"summary": {"gpus": [{"mem_used_mb_peak": 3000.0}]}, "samples": samples}
    (tmp_path / "resource_usage.json").write_text(json.dumps(usage))
    assert gpu.gpu_usage(tmp_path, (12, 20)) == ((80 + 90 + 2 * 100) / 4, 3000.0)
    assert gpu.gpu_usage(tmp_path, None) == (None, 3000.0)


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
