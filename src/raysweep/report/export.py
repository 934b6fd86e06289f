"""Write results.json, results.csv and best_config.json from a SweepResult."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from raysweep.jsonio import write_json_atomic, write_text_atomic
from raysweep.report.records import SweepResult, TrialRecord

RESULTS_JSON = "results.json"
RESULTS_CSV = "results.csv"
BEST_CONFIG = "best_config.json"


def best_config_json(result: SweepResult, trial: TrialRecord) -> dict[str, Any]:
    """``{"trial_id", "metric", "mode", "value", "config"}`` for one trial."""
    return {
        "trial_id": trial.trial_id,
        "metric": result.metric,
        "mode": result.mode,
        "value": trial.best_metric,
        "config": trial.config,
    }


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


def write_results(result: SweepResult, run_dir: Path) -> None:
    """Write results.json, results.csv and (when there is a best trial) best_config.json."""
    write_json_atomic(run_dir / RESULTS_JSON, result.to_json())
    write_text_atomic(run_dir / RESULTS_CSV, results_csv(result))
    best = result.best()
    if best is not None:
        write_json_atomic(run_dir / BEST_CONFIG, best_config_json(result, best))


def _cell(value: Any) -> Any:
    return json.dumps(value) if isinstance(value, list | dict) else value
