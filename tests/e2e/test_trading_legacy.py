"""The previous tool's template converts and runs; the legacy export has what its code reads.

``sweep import-legacy`` on examples/legacy_template.jsonc (the issue's template with
two entry models and the trading parameters), ``sweep run`` of the result on a
small file of synthetic bars (CPU: the template asks for 0.8 GPU per trial), then
``sweep best --export --legacy``: ``best_config["entry_model"]``,
``best_config["trading_params"]`` and ``best_config["configurations"][0]``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from raysweep.trainables.trading.synthetic import SyntheticOptions, synthetic_ohlcv

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
TEMPLATE = REPO / "examples" / "legacy_template.jsonc"


def test_template_converts_runs_and_exports_the_legacy_shape(
    tmp_path: Path, sweep_cli: Callable[..., Any]
) -> None:
    bars = tmp_path / "bars.csv"
    synthetic_ohlcv(SyntheticOptions(bars=1200, seed=5)).to_csv(bars, index=False)
    config = tmp_path / "legacy.json"
    args = ("--data", str(bars), "--num-samples", "3", "-o", str(config))
    proc = sweep_cli("import-legacy", str(TEMPLATE), *args)
    assert proc.returncode == 0, proc.stderr
    assert "mapped: sweep_type 'hyperband' -> search.algorithm 'random'" in proc.stderr
    sweep = json.loads(config.read_text())
    assert sweep["space"]["entry_model"]["values"] == ["lightgbm", "xgboost"]

    runs = tmp_path / "runs"
    proc = sweep_cli("run", "--config", str(config), "--storage", str(runs), "--allow-cpu",
                     "--no-dashboard", timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    export = tmp_path / "best_configs_latest.json"
    run = str(runs / "legacy")
    proc = sweep_cli("best", run, "--export", str(export), "--legacy", "--top", "2")
    assert proc.returncode == 0, proc.stderr

    best_config = json.loads(export.read_text())
    entry_model = best_config["entry_model"]
    assert entry_model["type"] in ("lightgbm", "xgboost")
    assert set(entry_model) - {"type"} <= {k.split(".", 1)[1] for k in sweep["space"]
                                           if k.startswith(entry_model["type"] + ".")}  # fmt: skip
    assert set(best_config["trading_params"]) == {"entry_threshold", "stop_loss",
                                                  "take_profit", "max_holding"}  # fmt: skip
    first = best_config["configurations"][0]
    assert first["entry_model"] == entry_model["type"]
    assert first["stop_loss"] == best_config["trading_params"]["stop_loss"]
    assert best_config["metrics"]["fold"] >= 1 and best_config["run"] == "legacy"


def test_what_cannot_be_mapped_exits_2_naming_the_key(
    tmp_path: Path, sweep_cli: Callable[..., Any]
) -> None:
    template = tmp_path / "t.jsonc"
    template.write_text('{"sweep_type": "hyperband", // ok\n "hyperband": {"brackets": 3}}')
    proc = sweep_cli("import-legacy", str(template))
    assert proc.returncode == 2 and "error: hyperband.brackets: not mapped" in proc.stderr
    template.write_text('{"parameter_ranges": {"lightgbm": {"num_levas": [4, 8]}}}')
    proc = sweep_cli("import-legacy", str(template))
    assert proc.returncode == 2
    assert "space.lightgbm.num_levas: unknown LightGBM parameter" in proc.stderr
    assert "(from the template's parameter_ranges.lightgbm.num_levas)" in proc.stderr
    proc = sweep_cli("best", str(tmp_path), "--legacy")
    assert proc.returncode == 2 and "--legacy: give the file to write with --export" in proc.stderr
