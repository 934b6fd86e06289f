"""The backtest and its metrics against values computed by hand on a tiny series."""

from __future__ import annotations

import math

import numpy as np
import pytest

from raysweep.trainables.trading.backtest import (
    EXIT_STOP,
    EXIT_TAKE_PROFIT,
    EXIT_TIME,
    run_backtest,
    signals,
)
from raysweep.trainables.trading.metrics import Cumulative, trading_metrics
from raysweep.trainables.trading.params import Costs, ScoreArgs, TradingParams

FEE, SLIP = 0.001, 0.0005  # 10 and 5 bps
COSTS = Costs(fee_bps=10, slippage_bps=5)
PARAMS = TradingParams(entry_threshold=0.6, stop_loss=0.02, take_profit=0.03, max_holding=3)
#                     open   high   low    close
BARS = np.array([[100.0, 101.0, 99.0, 100.0],  # 0: LONG signal
                 [100.0, 104.0, 99.5, 103.0],  # 1: long entry at the open; high reaches the target
                 [103.0, 103.5, 102.0, 103.0],  # 2: SHORT signal
                 [103.0, 105.5, 102.5, 105.0],  # 3: short entry; high reaches the stop
                 [105.0, 106.0, 104.0, 105.5],  # 4: LONG signal
                 [106.0, 107.0, 105.5, 106.5],  # 5: long entry; no level touched
                 [106.5, 108.0, 106.0, 107.5],  # 6
                 [107.5, 108.0, 107.0, 107.8]])  # 7: 3rd bar held: out at the close  # fmt: skip
DIRECTION = np.array([1, 0, -1, 0, 1, 0, 0, 0])


def test_signals_from_probabilities() -> None:
    proba = np.array([[0.1, 0.2, 0.7], [0.7, 0.2, 0.1], [0.3, 0.4, 0.3], [0.45, 0.1, 0.45]])
    assert signals(proba, 0.6, allow_short=True).tolist() == [1, -1, 0, 0]
    assert signals(proba, 0.6, allow_short=False).tolist() == [1, 0, 0, 0]
    assert signals(proba, 0.4, allow_short=True).tolist() == [1, -1, 0, 0]  # a tie is no trade


def test_trades_and_per_bar_returns_by_hand() -> None:
    result = run_backtest(*BARS.T, DIRECTION, PARAMS, COSTS)
    t = result.trades
    # trade 1: long in at 100 * 1.0005; target 3% above the fill, touched in bar 1
    in1 = 100 * (1 + SLIP)
    out1 = in1 * 1.03 * (1 - SLIP)
    # trade 2: short in at 103 * 0.9995; stop 2% above the fill, touched in bar 3
    in2 = 103 * (1 - SLIP)
    out2 = in2 * 1.02 * (1 + SLIP)
    # trade 3: long in at 106 * 1.0005; out at bar 7's close (3 bars held)
    in3 = 106 * (1 + SLIP)
    out3 = 107.8 * (1 - SLIP)
    net = [
        out1 / in1 - 1 - FEE * (1 + out1 / in1),
        -(out2 / in2 - 1) - FEE * (1 + out2 / in2),
        out3 / in3 - 1 - FEE * (1 + out3 / in3),
    ]
    assert t.direction.tolist() == [1, -1, 1]
    assert t.entry_bar.tolist() == [1, 3, 5] and t.exit_bar.tolist() == [1, 3, 7]
    assert t.reason.tolist() == [EXIT_TAKE_PROFIT, EXIT_STOP, EXIT_TIME]
    assert np.allclose(t.entry_price, [in1, in2, in3])
    assert np.allclose(t.exit_price, [out1, out2, out3])
    assert np.allclose(t.net_return, net)
    bar5 = (106.5 - in3) / in3 - FEE
    bar6 = (107.5 - 106.5) / in3
    bar7 = (out3 - 107.5) / in3 - FEE * out3 / in3
    expected = [0, net[0], 0, net[1], 0, bar5, bar6, bar7]
    assert np.allclose(result.bar_returns, expected)
    assert math.isclose(bar5 + bar6 + bar7, net[2])


def test_metrics_by_hand() -> None:
    r = run_backtest(*BARS.T, DIRECTION, PARAMS, COSTS).bar_returns
    trades = run_backtest(*BARS.T, DIRECTION, PARAMS, COSTS).trades.net_return
    periods = 8760.0
    mean = sum(r) / 8
    std = math.sqrt(sum((x - mean) ** 2 for x in r) / 7)
    downside = math.sqrt(sum(min(x, 0.0) ** 2 for x in r) / 8)
    equity, peak, drawdown = 1.0, 1.0, 0.0
    for x in r:
        equity *= 1 + x
        peak = max(peak, equity)
        drawdown = max(drawdown, 1 - equity / peak)
    sharpe = math.sqrt(periods) * mean / std
    got = trading_metrics(r, trades, 8, periods, ScoreArgs(min_trades=20, drawdown_weight=2.0))
    assert got["sharpe"] == pytest.approx(sharpe)
    assert got["sortino"] == pytest.approx(math.sqrt(periods) * mean / downside)
    assert got["win_rate"] == pytest.approx(2 / 3)
    assert got["profit_rate"] == pytest.approx(equity - 1)
    assert got["max_drawdown"] == pytest.approx(drawdown) and drawdown > 0.02
    assert got["n_trades"] == 3 and got["turnover"] == pytest.approx(2 * 3 / 8)
    assert got["composite"] == pytest.approx(sharpe * 3 / 20 - 2 * drawdown)


def test_gaps_fill_at_the_open_and_a_bar_touching_both_levels_is_a_stop() -> None:
    p = TradingParams(entry_threshold=0.5, stop_loss=0.02, take_profit=0.02, max_holding=5)
    free = Costs(fee_bps=0, slippage_bps=0)
    gap_down = np.array([[100, 100, 100, 100], [100, 101, 99, 100], [95, 96, 94, 95.0]])
    t = run_backtest(*gap_down.T, np.array([1, 0, 0]), p, free).trades
    assert t.exit_price.tolist() == [95.0] and t.reason.tolist() == [EXIT_STOP]
    gap_up = np.array([[100, 100, 100, 100], [100, 101, 99, 100], [105, 106, 104, 105.0]])
    t = run_backtest(*gap_up.T, np.array([1, 0, 0]), p, free).trades
    assert t.exit_price.tolist() == [105.0] and t.reason.tolist() == [EXIT_TAKE_PROFIT]
    both = np.array([[100, 100, 100, 100], [100, 103, 97, 100.0]])
    t = run_backtest(*both.T, np.array([1, 0]), p, free).trades
    assert t.exit_price.tolist() == [98.0] and t.reason.tolist() == [EXIT_STOP]


def test_signals_during_a_position_are_ignored_and_the_fold_end_closes_it() -> None:
    bars = np.tile([100.0, 100.5, 99.5, 100.0], (6, 1))
    p = TradingParams(entry_threshold=0.5, stop_loss=0.05, take_profit=0.05, max_holding=10)
    t = run_backtest(*bars.T, np.array([1, -1, 1, 1, 0, 1]), p, COSTS).trades
    assert t.entry_bar.tolist() == [1] and t.exit_bar.tolist() == [5]  # last bar's signal: no entry


def test_no_trades_scores_zero_never_nan() -> None:
    result = run_backtest(*BARS.T, np.zeros(8, dtype=np.int8), PARAMS, COSTS)
    assert len(result.trades) == 0 and not result.bar_returns.any()
    got = trading_metrics(result.bar_returns, result.trades.net_return, 8, 8760.0, ScoreArgs())
    assert got == dict.fromkeys(got, 0.0)
    empty = Cumulative().metrics(8760.0, ScoreArgs())
    assert all(v == 0.0 for v in empty.values())


def test_cumulative_round_trips_through_arrays() -> None:
    cum = Cumulative()
    cum.add(np.array([0.01, -0.02]), np.array([0.5]), 2, np.array([0.7, 0.9]))
    cum.add(np.array([0.03]), np.empty(0), 1, np.array([1.1]))
    back = Cumulative.from_arrays(cum.to_arrays())
    assert back.metrics(100.0, ScoreArgs()) == cum.metrics(100.0, ScoreArgs())
    assert [len(a) for a in back.bar_returns] == [2, 1]
