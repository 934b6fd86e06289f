"""The ``cnn_lstm`` entry model on CPU: folds, determinism, resume, windows, parameter checks.

Tiny on purpose (a few small epochs over 1,200 bars): the CUDA path is in
tests/gpu/test_cnn_lstm_gpu.py.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from factories import trading_sweep
from raysweep.config.load import parse_spec
from raysweep.errors import ConfigError
from raysweep.trainables.checks import check_trainable
from raysweep.trainables.context import TrialContext
from raysweep.trainables.trading.cnn_lstm import window_index
from raysweep.trainables.trading.params import METRICS
from raysweep.trainables.trading.trainable import fit_trading

pytest.importorskip("torch")

ARGS = {"data": "synthetic", "synthetic": {"bars": 1200, "seed": 3, "symbols": 2},
        "n_folds": 2, "embargo": 6}  # fmt: skip
CONFIG = {
    "entry_model": "cnn_lstm",
    "label_horizon": 6,
    "entry_threshold": 0.4,
    "cnn_lstm.seq_len": 8,
    "cnn_lstm.conv_channels": 4,
    "cnn_lstm.hidden_size": 8,
    "cnn_lstm.epochs": 2,
    "cnn_lstm.batch_size": 128,
}


def fit(
    tmp: Path, config: dict[str, Any], resume: Path | None = None, seed: int = 5, **ctx: Any
) -> tuple[list[dict[str, float]], list[Path]]:
    metrics: list[dict[str, float]] = []
    saved: list[Path] = []

    def report(values: dict[str, float], checkpoint: Path | None) -> None:
        metrics.append(values)
        if checkpoint is not None:
            saved.append(Path(shutil.copytree(checkpoint, tmp / f"ckpt-{len(metrics)}")))

    context = TrialContext(index=0, seed=seed, metric="composite", mode="max",
                           trainable_args=ARGS, **ctx)  # fmt: skip
    fit_trading(config, context, report, resume)
    return metrics, saved


def test_reports_every_fold_and_repeats_exactly(tmp_path: Path) -> None:
    first, _ = fit(tmp_path / "a", CONFIG)
    assert [m["fold"] for m in first] == [1.0, 2.0]
    for m in first:
        assert set(m) == set(METRICS) and all(np.isfinite(v) for v in m.values())
    assert 0.5 < first[-1]["log_loss"] < 2.0  # three classes: ln 3 ~ 1.1 for a coin toss
    again, _ = fit(tmp_path / "b", CONFIG)
    assert again == first  # deterministic mode on CPU: bit for bit
    other, _ = fit(tmp_path / "c", CONFIG, seed=6)
    assert [m["log_loss"] for m in other] != [m["log_loss"] for m in first]


def test_resumed_at_a_fold_reports_what_an_uninterrupted_trial_does(tmp_path: Path) -> None:
    whole, saved = fit(tmp_path / "a", CONFIG, checkpoint_frequency=1)
    assert len(saved) == 2
    resumed, _ = fit(tmp_path / "b", CONFIG, resume=saved[0], checkpoint_frequency=1)
    assert resumed == whole[1:]


def test_windows_look_back_within_their_symbol_only() -> None:
    symbols = np.array(["A"] * 5 + ["B"] * 4)
    rows = np.array([0, 2, 4, 5, 8])
    index = window_index(symbols, rows, 3)
    assert index.tolist() == [[0, 0, 0], [0, 1, 2], [2, 3, 4], [5, 5, 5], [6, 7, 8]]
    assert (index <= rows[:, None]).all()  # never a later bar


def cnn_lstm_sweep(space: dict[str, Any]) -> dict[str, Any]:
    return trading_sweep({"entry_model": "cnn_lstm", **space})


def test_a_good_space_passes() -> None:
    space = {
        "cnn_lstm.hidden_size": {"type": "choice", "values": [16, 32]},
        "cnn_lstm.learning_rate": {"type": "loguniform", "low": 1e-4, "high": 1e-2},
        "cnn_lstm.seq_len": 16,
    }
    check_trainable(parse_spec(cnn_lstm_sweep(space)))


@pytest.mark.parametrize(
    ("space", "message"),
    [
        (
            {"cnn_lstm.hiden_size": 8},
            r"space\.cnn_lstm\.hiden_size: unknown parameter; did you "
            r"mean hidden_size",
        ),
        ({"cnn_lstm.dropout": 1.5}, r"space\.cnn_lstm\.dropout: must be a number in \[0, 0\.9\]"),
        ({"cnn_lstm.epochs": 0}, r"space\.cnn_lstm\.epochs: must be an integer >= 1 \(got 0\)"),
        (
            {"cnn_lstm.kernel_size": {"type": "int", "low": 2, "high": 12}, "cnn_lstm.seq_len": 8},
            r"space\.cnn_lstm\.kernel_size: must be <= seq_len \(got 12 > 8\) "
            r"\(at cnn_lstm\.kernel_size=12\)",
        ),
        ({"lightgbm.num_leaves": 8}, r"space\.lightgbm\.num_leaves: entry_model never takes"),
    ],
)
def test_bad_parameters_name_the_key(space: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        check_trainable(parse_spec(cnn_lstm_sweep(space)))
