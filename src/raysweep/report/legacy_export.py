"""``sweep best RUN --export FILE --legacy``: a trading sweep's best, in the previous tool's shape.

The training and production code of the previous tool reads
``models/best_configs_latest.json`` as ``best_config["entry_model"]``,
``best_config["trading_params"]`` and ``best_config["configurations"][0]``::

    {"configurations": [<config>, ...],          # the top K, best first (flat raysweep configs,
                                                 #  as sweep run --warm-start reads them)
     "entry_model": {"type": "lightgbm", "num_leaves": 31, ...},   # the best's model
     "trading_params": {"entry_threshold": ..., "stop_loss": ..., "take_profit": ...,
                        "max_holding": ...},     # defaults filled in
     "features": {"rsi_window": ..., "label_horizon": ..., ...},   # defaults filled in
     "metrics": {"composite": ..., "sharpe": ..., ...},            # the best's, all folds
     "generated_at": "2026-11-24T02:00:00Z", "run": "<run name>"}

Ranking: the metrics are cumulative over the folds a trial ran, so a trial that
ran every fold is ranked by its final value, ahead of trials a scheduler stopped
early (their score covers fewer folds); those follow, by their last value.
"""

from __future__ import annotations

from typing import Any

from raysweep.results.ranking import rank_trials
from raysweep.results.records import SweepResult, TrialRecord


def legacy_ranking(result: SweepResult) -> list[TrialRecord]:
    """Trials with the metric by the one ranking rule's last value (results/ranking.py),
    whatever the sweep's ``rank_by``: those that ran every fold first, each group best first.
    """
    finished = [t for t in result.trials if t.status in ("completed", "stopped")]
    return rank_trials(finished, result.metric, result.mode, "last")


def legacy_export(
    result: SweepResult, run_name: str, generated_at: str, top: int = 5
) -> dict[str, Any]:
    """The previous tool's best-configs document for a trading sweep (ValueError without one)."""
    from raysweep.trainables.trading.params import (
        FEATURE_DEFAULTS,
        LABEL_DEFAULTS,
        METRICS,
        TradingParams,
        entry_library,
        model_config,
    )

    ranked = legacy_ranking(result)
    if not ranked:
        raise ValueError(f"no trial of {run_name} reported {result.metric!r}")
    best = ranked[0]
    library = entry_library(best.config)
    features = {k: best.config.get(k, v) for k, v in {**FEATURE_DEFAULTS, **LABEL_DEFAULTS}.items()}
    return {
        "configurations": [t.config for t in ranked[: max(top, 1)]],
        "entry_model": {"type": library, **model_config(best.config, library)},
        "trading_params": TradingParams.from_config(best.config).to_json(),
        "features": features,
        "metrics": {k: best.last[k] for k in METRICS if k in best.last},
        "generated_at": generated_at,
        "run": run_name,
    }
