"""The ``trading`` built-in trainable: OHLCV features, labels, walk-forward folds, backtests.

A GBM entry model (LightGBM, XGBoost or CatBoost) classifies the next move
(SHORT / NO_TRADE / LONG) from features of past bars; its probabilities drive
a backtest with fees, slippage, stop loss, take profit and a holding limit on
each walk-forward validation fold. Every fold reports trading metrics
cumulated over the folds seen so far (docs/trading.md).

Modules: ``params`` (names, defaults, typed config), ``data`` (loading and
validation), ``synthetic`` (seeded synthetic market data), ``features``,
``lookahead`` (the causality check), ``labels``, ``folds``, ``model`` (the entry
model), ``backtest``, ``metrics``, ``trainable`` (the Ray Tune function),
``checks`` (what ``sweep validate`` checks) and ``space`` (alias resolution).
This package ``__init__`` imports nothing, so the registry can name the
trainable without importing pandas or a GBM library.
"""
