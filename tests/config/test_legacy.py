"""The previous tool's template: comments, what maps where, what is refused (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from raysweep.config.legacy import convert, explain, read_template, strip_comments
from raysweep.config.load import parse_spec
from raysweep.errors import ConfigError
from raysweep.report.legacy_export import legacy_export, legacy_ranking
from raysweep.results.records import SweepResult, TrialRecord

REPO = Path(__file__).resolve().parents[2]
TEMPLATE = REPO / "examples" / "legacy_template.jsonc"


def test_comments_and_trailing_commas_go_strings_stay() -> None:
    text = '{"a": "http://x/*y*/", // c\n "b": [1, 2,], /* d */ "c": "//"}'
    assert json.loads(strip_comments(text)) == {"a": "http://x/*y*/", "b": [1, 2], "c": "//"}


def test_the_example_template_maps_as_documented() -> None:
    conversion = convert(read_template(TEMPLATE), name="nightly", data="bars.csv")
    sweep = conversion.sweep
    assert sweep["search"] == {"algorithm": "random", "num_samples": 10}
    assert sweep["scheduler"] == {"type": "hyperband", "max_t": 4, "reduction_factor": 3}
    assert sweep["trainable_args"] == {"data": "bars.csv", "n_folds": 4, "num_boost_round": 81}
    assert sweep["resources"] == {"cpus_per_trial": 1, "gpus_per_trial": 0.8}
    assert sweep["reproducibility"] == {"deterministic": True}
    space = sweep["space"]
    assert space["entry_model"] == {"type": "choice", "values": ["lightgbm", "xgboost"]}
    when = {"entry_model": "lightgbm"}
    assert space["lightgbm.num_leaves"] == {"type": "int", "low": 15, "high": 63, "when": when}
    assert space["lightgbm.learning_rate"] == {"type": "uniform", "low": 0.01, "high": 0.2,
                                               "when": when}  # fmt: skip
    assert space["lightgbm.boosting"] == {"type": "choice", "values": ["gbdt", "goss"],
                                          "when": when}  # fmt: skip
    assert space["xgboost.subsample"]["type"] == "choice"
    assert space["max_holding"] == {"type": "int", "low": 6, "high": 48}
    assert any("hyperband.max_iter 81 -> trainable_args.num_boost_round" in n
               for n in conversion.notes)  # fmt: skip
    parse_spec(sweep)  # a valid sweep.json


def test_sweep_types_one_model_and_pass_through() -> None:
    ranges = {"lightgbm": {"num_leaves": {"type": "int", "low": 8, "high": 16}, "max_bin": 63},
              "trading_params": {"threshold": [0.5, 0.7], "stop_loss": 0.02}}  # fmt: skip
    bayes = convert({"sweep_type": "bayesian", "parameter_ranges": ranges}).sweep
    assert bayes["search"] == {"algorithm": "optuna", "num_samples": 20}
    assert bayes["scheduler"] == {"type": "fifo"}
    assert bayes["space"] == {
        "entry_model": "lightgbm",
        "lightgbm.num_leaves": {"type": "int", "low": 8, "high": 16},  # no condition needed
        "lightgbm.max_bin": 63,
        "entry_threshold": {"type": "uniform", "low": 0.5, "high": 0.7},  # renamed
        "stop_loss": 0.02,
    }
    grid = convert({"sweep_type": "grid", "parameter_ranges": {
        "xgboost": {"max_depth": [3, 5], "eta": [0.1, 0.2, 0.3]}}}).sweep  # fmt: skip
    assert grid["space"]["xgboost.max_depth"] == {"type": "grid", "values": [3, 4, 5]}
    assert grid["space"]["xgboost.eta"] == {"type": "grid", "values": [0.1, 0.2, 0.3]}
    parse_spec(grid)


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ({"sweeps": 3}, r"^sweeps: not a key of the legacy template"),
        ({"sweep_type": "evolution"}, r"^sweep_type: 'evolution' is not one of"),
        ({"parameter_ranges": {"random_forest": {}}}, r"^parameter_ranges\.random_forest: not an"),
        ({"sweep_type": "hyperband", "hyperband": {"brackets": 2}}, r"^hyperband\.brackets: not"),
        ({"sweep_type": "hyperband", "hyperband": {"eta": 1}}, r"^hyperband\.eta: must be"),
        ({"gpu_settings": {"allow_growth": True}}, r"^gpu_settings\.allow_growth: not mapped"),
        ({"gpu_settings": {"memory_fraction": 1.5}}, r"^gpu_settings\.memory_fraction: must be"),
        (
            {"sweep_type": "grid", "parameter_ranges": {"lightgbm": {}, "xgboost": {}}},
            r"^parameter_ranges: a grid sweep cannot choose among entry models",
        ),
        (
            {"sweep_type": "grid", "parameter_ranges": {"lightgbm": {"eta": [0.1, 0.3]}}},
            r"^parameter_ranges\.lightgbm\.eta: a grid sweep needs the values themselves",
        ),
        (
            {"parameter_ranges": {"trading_params": {"stop_loss": [0.05, 0.01]}}},
            r"^parameter_ranges\.trading_params\.stop_loss: \[low, high\] needs low < high",
        ),
    ],
)
def test_what_cannot_be_mapped_is_refused_by_key(template: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        convert(template)


def test_errors_of_the_converted_sweep_name_the_template_key() -> None:
    text = explain("space.lightgbm.num_levas: unknown LightGBM parameter")
    assert text.endswith("(from the template's parameter_ranges.lightgbm.num_levas)")


def record(index: int, status: str, iterations: int, composite: float, **config: Any) -> Any:
    last = {"composite": composite, "sharpe": 1.0 + index, "n_trades": 30.0, "fold": iterations}
    return TrialRecord(trial_id=f"t{index}", index=index, status=status,  # type: ignore[arg-type]
                       config=config, seed=index, iterations=iterations, last=last,
                       best_metric=composite + 5)  # fmt: skip


def test_legacy_export_ranks_full_trials_first_and_fills_defaults() -> None:
    trials = [
        record(0, "stopped", 1, 9.0, entry_model="xgboost"),  # one lucky fold
        record(1, "completed", 4, 0.5, entry_model="lightgbm", stop_loss=0.03),
        record(2, "completed", 4, 0.7, **{"entry_model": "xgboost", "xgboost.max_depth": 4,
                                          "lightgbm.num_leaves": 9, "label_horizon": 8}),
        record(3, "errored", 0, 99.0),
    ]  # fmt: skip
    result = SweepResult(name="n", metric="composite", mode="max", trials=trials)
    assert [t.index for t in legacy_ranking(result)] == [2, 1, 0]
    doc = legacy_export(result, "nightly", "2026-11-24T02:00:00Z", top=2)
    assert doc["configurations"][0] == trials[2].config and len(doc["configurations"]) == 2
    assert doc["entry_model"] == {"type": "xgboost", "max_depth": 4}
    assert doc["trading_params"] == {"entry_threshold": 0.5, "stop_loss": 0.02,
                                     "take_profit": 0.04, "max_holding": 24}  # fmt: skip
    assert doc["features"]["label_horizon"] == 8 and doc["features"]["rsi_window"] == 14
    assert doc["metrics"] == {"composite": 0.7, "sharpe": 3.0, "n_trades": 30.0, "fold": 4}
    assert (doc["run"], doc["generated_at"]) == ("nightly", "2026-11-24T02:00:00Z")
