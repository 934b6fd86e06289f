"""Trading metrics of the validation folds seen so far, and the composite score.

From the portfolio's per-bar returns ``r`` (each symbol's bar return, averaged over
the symbols; 0 while flat), its trades' net returns, and ``P`` periods per year:

* ``sharpe`` = sqrt(P) * mean(r) / std(r) (sample std); 0 when std is 0;
* ``sortino`` = sqrt(P) * mean(r) / sqrt(mean(min(r, 0)^2)); 0 when no bar lost;
* ``win_rate`` = trades with a net return > 0 / trades; 0 without trades;
* ``profit_rate`` = prod(1 + r) - 1: the compounded return over the folds;
* ``max_drawdown`` = max_t (1 - E_t / max_{s<=t} E_s), E = cumprod(1 + r) from 1;
* ``n_trades``; ``turnover`` = 2 * n_trades / symbol-bars: notional traded per bar
  and symbol, as a fraction of that symbol's capital;
* ``composite`` = sharpe * min(1, n_trades / min_trades) - drawdown_weight * max_drawdown:
  the Sharpe ratio, discounted while there are too few trades to trust it, minus a
  penalty for the worst loss from a peak.

A configuration without trades scores 0 on every metric: never NaN.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from raysweep.trainables.trading.params import ScoreArgs

SECONDS_PER_YEAR = 365.25 * 24 * 3600


def periods_per_year(interval_seconds: float) -> float:
    """Bars per year for markets open around the clock (crypto)."""
    return SECONDS_PER_YEAR / interval_seconds


def sharpe_ratio(r: np.ndarray, periods: float) -> float:
    if len(r) < 2:
        return 0.0
    std = float(np.std(r, ddof=1))
    return float(np.sqrt(periods) * np.mean(r) / std) if std > 0 else 0.0


def sortino_ratio(r: np.ndarray, periods: float) -> float:
    if not len(r):
        return 0.0
    downside = float(np.sqrt(np.mean(np.minimum(r, 0.0) ** 2)))
    return float(np.sqrt(periods) * np.mean(r) / downside) if downside > 0 else 0.0


def max_drawdown(r: np.ndarray) -> float:
    if not len(r):
        return 0.0
    equity = np.concatenate([[1.0], np.cumprod(1.0 + r)])
    return float(np.max(1.0 - equity / np.maximum.accumulate(equity)))


def trading_metrics(
    bar_returns: np.ndarray,
    trade_returns: np.ndarray,
    symbol_bars: int,
    periods: float,
    score: ScoreArgs,
) -> dict[str, float]:
    """Every metric of the module docstring (``composite`` included)."""
    r = np.asarray(bar_returns, dtype=np.float64)
    trades = np.asarray(trade_returns, dtype=np.float64)
    n_trades = len(trades)
    sharpe = sharpe_ratio(r, periods) if n_trades else 0.0
    drawdown = max_drawdown(r)
    confidence = min(1.0, n_trades / score.min_trades)
    return {
        "composite": sharpe * confidence - score.drawdown_weight * drawdown,
        "sharpe": sharpe,
        "sortino": sortino_ratio(r, periods) if n_trades else 0.0,
        "win_rate": float(np.mean(trades > 0)) if n_trades else 0.0,
        "profit_rate": float(np.prod(1.0 + r) - 1.0) if len(r) else 0.0,
        "max_drawdown": drawdown,
        "n_trades": float(n_trades),
        "turnover": 2.0 * n_trades / symbol_bars if symbol_bars else 0.0,
    }


@dataclass
class Cumulative:
    """What the folds seen so far add up to; saved with each checkpoint (arrays only)."""

    bar_returns: list[np.ndarray] = field(default_factory=list)
    trade_returns: list[np.ndarray] = field(default_factory=list)
    symbol_bars: int = 0
    log_loss_sum: float = 0.0
    labelled: int = 0

    def add(
        self, bar_returns: np.ndarray, trades: np.ndarray, symbol_bars: int, losses: np.ndarray
    ) -> None:
        """Add one fold: its portfolio bar returns, trade returns and per-row log losses."""
        self.bar_returns.append(np.asarray(bar_returns, dtype=np.float64))
        self.trade_returns.append(np.asarray(trades, dtype=np.float64))
        self.symbol_bars += symbol_bars
        self.log_loss_sum += float(np.sum(losses))
        self.labelled += len(losses)

    def metrics(self, periods: float, score: ScoreArgs) -> dict[str, float]:
        """The trading metrics plus ``log_loss`` (the entry model's, on labelled rows)."""
        r = np.concatenate(self.bar_returns) if self.bar_returns else np.empty(0)
        t = np.concatenate(self.trade_returns) if self.trade_returns else np.empty(0)
        out = trading_metrics(r, t, self.symbol_bars, periods, score)
        out["log_loss"] = self.log_loss_sum / self.labelled if self.labelled else 0.0
        return out

    def to_arrays(self) -> dict[str, np.ndarray]:
        """For ``np.savez``: fold boundaries kept, so a restore rebuilds the same lists."""
        return {
            "bar_returns": np.concatenate(self.bar_returns or [np.empty(0)]),
            "bar_splits": np.cumsum([len(a) for a in self.bar_returns], dtype=np.int64)[:-1],
            "trade_returns": np.concatenate(self.trade_returns or [np.empty(0)]),
            "trade_splits": np.cumsum([len(a) for a in self.trade_returns], dtype=np.int64)[:-1],
            "counts": np.array([self.symbol_bars, self.labelled], dtype=np.int64),
            "log_loss_sum": np.array([self.log_loss_sum]),
        }

    @staticmethod
    def from_arrays(arrays: dict[str, np.ndarray]) -> Cumulative:
        return Cumulative(
            bar_returns=list(np.split(arrays["bar_returns"], arrays["bar_splits"])),
            trade_returns=list(np.split(arrays["trade_returns"], arrays["trade_splits"])),
            symbol_bars=int(arrays["counts"][0]),
            log_loss_sum=float(arrays["log_loss_sum"][0]),
            labelled=int(arrays["counts"][1]),
        )
