"""A trainable's own account of its data, asked in the sweep's process: the trading built-in's
registered describer, a user trainable's ``describe_data`` attribute; and ``max_t`` warnings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from factories import fx_hourly_bars, make_spec, make_sweep, trading_sweep
from raysweep.config.load import parse_spec
from raysweep.errors import TrainableError
from raysweep.trainables.describe import (
    best_trial_warnings,
    describe_data,
    max_t_warning,
    reports_per_trial,
)


def test_trading_describes_bars_gaps_and_fold_dates(tmp_path: Path) -> None:
    path = tmp_path / "EURUSD.csv"
    fx_hourly_bars(2000).to_csv(path)
    spec = parse_spec(trading_sweep(data=str(path), synthetic=None, n_folds=3, embargo=6))
    summary = describe_data(spec)
    assert summary is not None and not summary.warnings
    first, gaps = summary.lines[:2]
    assert first == ("EURUSD.csv: 2000 bars, 1 symbol(s) (EURUSD), 2004-08-19 00:00 UTC .. "
                     "2004-12-14 07:00 UTC, interval 1h")  # fmt: skip
    assert gaps == "17 gap(s), 816 missing bar(s); largest:"  # 17 weekends of 48 hours
    assert "3 walk-forward fold(s), expanding window, embargo 6 bar(s):" in summary.lines
    folds = summary.facts["folds"]
    assert [f["fold"] for f in folds] == [1, 2, 3]
    assert folds[2]["validation"][1] == "2004-12-14 07:00"  # the last bar
    assert folds[0]["validation_bars"] == (2000 - 1000) // 3
    assert summary.lines[-1].startswith("  fold 3: train 2004-08-19 00:00 .. ")
    assert summary.facts["bars"] == 2000 and summary.facts["gaps"] == 17
    assert 0.0005 < summary.facts["typical_move"] < 0.002  # about 0.1 % an hour


def test_synthetic_data_is_said_to_be_synthetic() -> None:
    summary = describe_data(parse_spec(trading_sweep()))
    assert summary is not None and summary.lines[0].startswith("synthetic (seed 0): 800 bars")
    assert "SYNTHETIC" in summary.warnings[0]


def write_trainable(tmp_path: Path, module: str, body: str) -> str:
    """``module:fit`` in ``tmp_path``, with ``body`` after the function."""
    (tmp_path / f"{module}.py").write_text("def fit(config):\n    pass\n\n" + body)
    return f"{module}:fit"


def test_a_user_trainable_offers_a_describer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    ref = write_trainable(
        tmp_path,
        "described_fit",
        "def describe(args):\n    return [f\"rows: {args['rows']}\", 'features: 3']\n\n"
        "fit.describe_data = describe\n",
    )
    spec = make_spec(trainable=ref, trainable_args={"rows": 120})
    summary = describe_data(spec)
    assert summary is not None and summary.lines == ("rows: 120", "features: 3")
    assert describe_data(make_spec()) is None  # examples.quadratic:fit offers none


def test_a_failing_describer_names_itself(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    body = "def broken(args):\n    raise OSError('no such table')\n\nfit.describe_data = broken\n"
    ref = write_trainable(tmp_path, "broken_fit", body)
    with pytest.raises(TrainableError, match=r"describe_data failed: OSError: no such table"):
        describe_data(make_spec(trainable=ref, name="broken"))


@pytest.mark.parametrize(
    ("data", "reports"),
    [
        (trading_sweep(n_folds=3), 3),
        (make_sweep("lightgbm", trainable_args={"num_boost_round": 50, "report_every": 10}), 5),
        (make_sweep("xgboost", trainable_args={"num_boost_round": 45, "report_every": 10}), 5),
        (make_sweep("torch_mlp", trainable_args={"epochs": 7}), 7),
    ],
)
def test_a_max_t_beyond_what_a_trial_reports_is_warned_about(
    data: dict[str, Any], reports: int
) -> None:
    fits = parse_spec({**data, "scheduler": {"type": "asha", "max_t": reports}})
    known = reports_per_trial(fits)
    assert known is not None and known[0] == reports
    assert max_t_warning(fits) is None
    over = parse_spec({**data, "scheduler": {"type": "hyperband", "max_t": reports + 1}})
    warning = max_t_warning(over)
    assert warning is not None and warning.startswith(
        f"warning: scheduler.max_t {reports + 1} is more than the {reports} result(s) a "
    )
    assert warning.endswith(f"set scheduler.max_t to {reports}")


def test_max_t_is_not_judged_for_user_trainables_or_sampled_rounds() -> None:
    assert max_t_warning(make_spec(scheduler={"type": "asha", "max_t": 1000})) is None
    sampled = parse_spec(
        make_sweep(
            "lightgbm",
            trainable_args={},  # the rounds are in the space alone
            space={"num_boost_round": {"type": "int", "low": 10, "high": 50}},
            scheduler={"type": "asha", "max_t": 1000},
        )
    )
    assert reports_per_trial(sampled) is None


def test_a_trading_best_trial_with_too_few_trades_is_warned_about() -> None:
    spec = parse_spec(trading_sweep(min_trades=20))
    few = best_trial_warnings(spec, "t0", {"n_trades": 2.0, "sharpe": 4.73})
    assert few == [
        "the best trial, t0, made 2 trade(s) over its validation folds, fewer than min_trades "
        "20: too few for its metrics (sharpe 4.73) to mean much. Size label_threshold, "
        "stop_loss and take_profit to the instrument's moves (the typical move per bar is in "
        "the data summary; docs/trading.md, 'Scaling the ranges to the instrument')"
    ]
    assert best_trial_warnings(spec, "t0", {"n_trades": 20.0}) == []
    assert best_trial_warnings(make_spec(), "t0", {"loss": 1.0}) == []  # offers no check


def test_a_failing_user_check_costs_a_warning_not_the_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    body = "def check(args, trial_id, last):\n    return 1 / 0\n\nfit.check_best = check\n"
    ref = write_trainable(tmp_path, "checked_fit", body)
    warnings = best_trial_warnings(make_spec(trainable=ref), "t0", {"loss": 1.0})
    assert warnings == ["check_best of trainable 'checked_fit:fit' failed: ZeroDivisionError: "
                        "division by zero"]  # fmt: skip
