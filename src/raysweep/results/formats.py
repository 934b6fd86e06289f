"""The formats of results.csv and best_config.json (RunDir writes the files)."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from raysweep.results.ranking import DEFAULT_RANK_BY
from raysweep.results.records import SweepResult, TrialRecord


def best_config_json(result: SweepResult, trial: TrialRecord) -> dict[str, Any]:
    """``{"trial_id", "metric", "mode", "value", "config"}`` for one trial.

    ``value`` is the one that ranks it (results/ranking.py); a sweep ranked by
    the ``last`` value says so in ``rank_by`` (absent: ``best``, as always).
    """
    data: dict[str, Any] = {
        "trial_id": trial.trial_id,
        "metric": result.metric,
        "mode": result.mode,
        "value": result.value(trial),
        "config": trial.config,
    }
    if result.rank_by != DEFAULT_RANK_BY:
        data["rank_by"] = result.rank_by
    return data


def results_csv(result: SweepResult) -> str:
    """One row per trial; config keys as ``config/<name>`` columns."""
    config_keys = sorted({k for t in result.trials for k in t.config})
    header = [
        "trial_id",
        "index",
        "status",
        "seed",
        "iterations",
        "best_metric",
        f"last/{result.metric}",
        "started_at",
        "ended_at",
        "gpu_ids",
        "error",
    ] + [f"config/{k}" for k in config_keys]
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(header)
    for t in result.trials:
        error = (t.error or "").strip().splitlines()
        writer.writerow(
            [
                t.trial_id,
                t.index,
                t.status,
                t.seed,
                t.iterations,
                t.best_metric,
                t.last.get(result.metric),
                t.started_at,
                t.ended_at,
                ";".join(t.gpu_ids),
                error[-1] if error else "",
            ]
            + [_cell(t.config.get(k)) for k in config_keys]
        )
    return buffer.getvalue()


def _cell(value: Any) -> Any:
    return json.dumps(value) if isinstance(value, list | dict) else value
