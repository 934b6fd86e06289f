"""The trading trainable in this process: each entry model, cumulative reports, resume."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from raysweep.errors import ConfigError
from raysweep.trainables.context import TrialContext
from raysweep.trainables.trading.params import METRICS
from raysweep.trainables.trading.trainable import fit_trading

ARGS = {"data": "synthetic", "synthetic": {"bars": 1500, "seed": 2}, "n_folds": 3,
        "num_boost_round": 15, "embargo": 6}  # fmt: skip
CONFIG = {"label_horizon": 6, "entry_threshold": 0.4, "max_holding": 12}


class Reports:
    """A reporter keeping metrics and a copy of each checkpoint."""

    def __init__(self, root: Path, stop_after: int | None = None) -> None:
        self.root, self.stop_after = root, stop_after
        self.metrics: list[dict[str, float]] = []
        self.checkpoints: list[Path] = []

    def __call__(self, metrics: dict[str, float], checkpoint: Path | None) -> None:
        self.metrics.append(metrics)
        if checkpoint is not None:
            copy = self.root / f"ckpt-{len(self.metrics)}"
            shutil.copytree(checkpoint, copy)
            self.checkpoints.append(copy)
        if self.stop_after and len(self.metrics) >= self.stop_after:
            raise KeyboardInterrupt  # what a stopped trial looks like from inside


def run(tmp: Path, config: dict[str, Any], resume: Path | None = None, **ctx: Any) -> Reports:
    context = TrialContext(index=0, seed=5, metric="composite", mode="max",
                           trainable_args=ARGS, **ctx)  # fmt: skip
    reports = Reports(tmp, ctx.pop("stop_after", None) if "stop_after" in ctx else None)
    fit_trading(config, context, reports, resume)
    return reports


@pytest.mark.parametrize("library", ["lightgbm", "xgboost", "catboost"])
def test_each_entry_model_reports_every_fold(tmp_path: Path, library: str) -> None:
    config = {**CONFIG, "entry_model": library, f"{library}.learning_rate": 0.2}
    reports = run(tmp_path, config).metrics
    assert [r["fold"] for r in reports] == [1.0, 2.0, 3.0]
    for r in reports:
        assert set(r) == set(METRICS) and all(np.isfinite(v) for v in r.values())
    trades = [r["n_trades"] for r in reports]
    assert trades == sorted(trades) and trades[-1] > 0  # cumulative over the folds seen
    assert 0.9 < reports[-1]["log_loss"] < 1.3


def test_same_seed_same_metrics_other_model_params_other_metrics(tmp_path: Path) -> None:
    first = run(tmp_path, CONFIG).metrics
    assert run(tmp_path, CONFIG).metrics == first
    other = run(tmp_path, {**CONFIG, "lightgbm.num_leaves": 4}).metrics
    assert other != first


def test_resumed_trial_reports_what_an_uninterrupted_one_does(tmp_path: Path) -> None:
    whole = run(tmp_path / "a", CONFIG, checkpoint_frequency=1)
    assert len(whole.checkpoints) == 3
    resumed = run(tmp_path / "b", CONFIG, resume=whole.checkpoints[0], checkpoint_frequency=1)
    assert resumed.metrics == whole.metrics[1:]


def test_checkpoints_only_when_due(tmp_path: Path) -> None:
    reports = run(tmp_path, CONFIG, checkpoint_frequency=2)
    assert [p.name for p in reports.checkpoints] == ["ckpt-2"]


def test_bad_values_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"space\.entry_model: must be one of lightgbm"):
        run(tmp_path, {"entry_model": "sklearn"})
    with pytest.raises(ConfigError, match=r"space\.macd_fast: must be < macd_slow"):
        run(tmp_path, {"macd_fast": 30})
    with pytest.raises(ConfigError, match=r"space.entry_threshold: must be a number in \[0, 1\]"):
        run(tmp_path, {"entry_threshold": 1.5})
