"""Backtest of one symbol over one validation fold: entries, exits, per-bar returns.

Rules (docs/trading.md has them with an example):

* The model's probabilities at bar t (known at t's close) give a signal: LONG when
  P(LONG) >= ``entry_threshold`` and P(LONG) > P(SHORT); SHORT likewise (only with
  ``allow_short``). A signal while a position is open is ignored.
* Entry at the next bar's open, filled ``slippage`` worse: ``open * (1 + d * slip)``
  (d = +1 long, -1 short).
* From the entry bar on, each bar is checked for the stop loss (``entry * (1 - d * stop_loss)``)
  and the take profit (``entry * (1 + d * take_profit)``) against its low and high;
  a bar that touches both counts as a stop (the worse case). A bar that opens beyond a
  level fills at its open. Otherwise the position is closed at the close of its
  ``max_holding``-th bar, or of the fold's last bar.
* The exit is filled ``slippage`` worse: ``price * (1 - d * slip)``; a fee of ``fee`` is
  paid on the notional of both sides. Per unit of entry notional a trade returns
  ``d * (exit - entry) / entry - fee * (1 + exit / entry)``.
* Per-bar returns mark the position to each bar's close (the entry fee on the entry
  bar, the exit fee on the exit bar); they add up to the trade's return.

Candidate exits are found for every signal at once (a (signals x max_holding) window,
in blocks); only the chain of non-overlapping trades is walked in Python, one step per
trade.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from raysweep.trainables.trading.labels import LONG, SHORT
from raysweep.trainables.trading.params import Costs, TradingParams

EXIT_STOP, EXIT_TAKE_PROFIT, EXIT_TIME = 0, 1, 2
EXIT_NAMES: tuple[str, ...] = ("stop_loss", "take_profit", "time")
_BLOCK_CELLS = 1 << 21  # elements of the signal x holding window computed at once


@dataclass(frozen=True)
class Trades:
    """Trades in entry order: direction (+1/-1), entry and exit bar, fills, return, reason."""

    direction: np.ndarray
    entry_bar: np.ndarray
    exit_bar: np.ndarray
    entry_price: np.ndarray
    exit_price: np.ndarray
    net_return: np.ndarray
    reason: np.ndarray

    def __len__(self) -> int:
        return len(self.direction)


@dataclass(frozen=True)
class Backtest:
    """Per-bar returns of the segment (0 when flat) and its trades."""

    bar_returns: np.ndarray
    trades: Trades


def signals(proba: np.ndarray, threshold: float, allow_short: bool) -> np.ndarray:
    """+1 / -1 / 0 per bar from (n, 3) probabilities of SHORT, NO_TRADE, LONG."""
    p_long, p_short = proba[:, LONG], proba[:, SHORT]
    out = np.where((p_long >= threshold) & (p_long > p_short), 1, 0)
    if allow_short:
        out = np.where((p_short >= threshold) & (p_short > p_long), -1, out)
    return out.astype(np.int8)


def run_backtest(
    open_: np.ndarray,
    high: np.ndarray,
    low: np.ndarray,
    close: np.ndarray,
    direction: np.ndarray,
    params: TradingParams,
    costs: Costs,
) -> Backtest:
    """Trade ``direction`` (+1/-1/0 per bar, decided at its close) over these bars."""
    n = len(close)
    candidates = np.flatnonzero(direction[: n - 1])  # an entry needs a next bar
    if not len(candidates):
        return Backtest(np.zeros(n), _trades(*(np.empty(0) for _ in range(7))))
    d = direction[candidates].astype(np.float64)
    entry_bar = candidates + 1
    entry = open_[entry_bar] * (1.0 + d * costs.slippage)
    exit_bar, exit_px, reason = _exits(open_, high, low, close, entry_bar, d, entry, params)
    taken = _chain(candidates, exit_bar)
    d, entry_bar, entry = d[taken], entry_bar[taken], entry[taken]
    exit_bar, reason = exit_bar[taken], reason[taken]
    exit_fill = exit_px[taken] * (1.0 - d * costs.slippage)
    ratio = exit_fill / entry
    net = d * (ratio - 1.0) - costs.fee * (1.0 + ratio)
    bar_returns = _mark_to_market(n, close, d, entry_bar, exit_bar, entry, exit_fill, costs.fee)
    trades = _trades(d, entry_bar, exit_bar, entry, exit_fill, net, reason)
    return Backtest(bar_returns, trades)


def _exits(
    open_: np.ndarray,
    high: np.ndarray,
    low: np.ndarray,
    close: np.ndarray,
    entry_bar: np.ndarray,
    d: np.ndarray,
    entry: np.ndarray,
    p: TradingParams,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exit bar, exit price (before slippage) and reason of a trade from every candidate."""
    n, hold = len(close), p.max_holding
    steps = np.arange(hold)
    stop = entry * (1.0 - d * p.stop_loss)
    target = entry * (1.0 + d * p.take_profit)
    exit_bar = np.minimum(entry_bar + hold - 1, n - 1)
    exit_px, reason = close[exit_bar].copy(), np.full(len(d), EXIT_TIME, dtype=np.int8)
    block = max(1, _BLOCK_CELLS // hold)
    for lo in range(0, len(d), block):
        s = slice(lo, lo + block)
        bars = entry_bar[s, None] + steps[None, :]
        inside = bars < n
        bars = np.minimum(bars, n - 1)
        ds = d[s, None]
        adverse = np.where(ds > 0, low[bars], high[bars])
        favourable = np.where(ds > 0, high[bars], low[bars])
        hit_stop = inside & (ds * (adverse - stop[s, None]) <= 0) if p.stop_loss > 0 else None
        hit_take = (
            inside & (ds * (favourable - target[s, None]) >= 0) if p.take_profit > 0 else None
        )
        hits = [h for h in (hit_stop, hit_take) if h is not None]
        if not hits:
            continue
        hit = hits[0] | hits[1] if len(hits) == 2 else hits[0]
        rows = np.flatnonzero(hit.any(axis=1))
        first = hit[rows].argmax(axis=1)
        bar = bars[rows, first]
        is_stop = hit_stop[rows, first] if hit_stop is not None else np.zeros(len(rows), bool)
        level = np.where(is_stop, stop[s][rows], target[s][rows])
        o, dr = open_[bar], d[s][rows]
        # a bar opening beyond the level fills at its open (worse for stops, better for targets)
        gapped = np.where(is_stop, dr * (o - level) < 0, dr * (o - level) > 0)
        idx = lo + rows
        exit_bar[idx] = bar
        exit_px[idx] = np.where(gapped, o, level)
        reason[idx] = np.where(is_stop, EXIT_STOP, EXIT_TAKE_PROFIT)
    return exit_bar, exit_px, reason


def _chain(candidates: np.ndarray, exit_bar: np.ndarray) -> np.ndarray:
    """Indices of the candidates traded: the first, then the first signal at or after each exit."""
    taken, i, count = [], 0, len(candidates)
    while i < count:
        taken.append(i)
        i = int(np.searchsorted(candidates, exit_bar[i], side="left"))
    return np.asarray(taken, dtype=np.int64)


def _mark_to_market(
    n: int,
    close: np.ndarray,
    d: np.ndarray,
    entry_bar: np.ndarray,
    exit_bar: np.ndarray,
    entry: np.ndarray,
    exit_fill: np.ndarray,
    fee: float,
) -> np.ndarray:
    """Per-bar returns of the trades, marked to each close (see the module docstring)."""
    out = np.zeros(n)
    lengths = exit_bar - entry_bar + 1
    starts = np.cumsum(lengths) - lengths
    trade = np.repeat(np.arange(len(d)), lengths)
    bar = entry_bar[trade] + (np.arange(lengths.sum()) - starts[trade])
    mark = close[bar].copy()
    last = starts + lengths - 1
    mark[last] = exit_fill
    prev = np.empty_like(mark)
    prev[1:] = mark[:-1]
    prev[starts] = entry
    out[bar] = d[trade] * (mark - prev) / entry[trade]
    out[entry_bar] -= fee
    out[exit_bar] -= fee * exit_fill / entry
    return out


def _trades(*columns: np.ndarray) -> Trades:
    d, entry_bar, exit_bar, entry, exit_fill, net, reason = columns
    return Trades(
        direction=d.astype(np.int8),
        entry_bar=entry_bar.astype(np.int64),
        exit_bar=exit_bar.astype(np.int64),
        entry_price=entry.astype(np.float64),
        exit_price=exit_fill.astype(np.float64),
        net_return=net.astype(np.float64),
        reason=reason.astype(np.int8),
    )
