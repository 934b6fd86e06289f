"""Collect and write, for any engine: trial records -> SweepResult -> the run's outputs.

An engine hands its trials (``TrialView``s, results/trial_view.py) to
:func:`collect_result`; :func:`write_outputs` writes results.json/csv,
best_config.json and the reports. Ray's trials and the local engine's go the same way.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from raysweep.report.collect import collect_spec_trials
from raysweep.results.records import WALL_TIME_DECIMALS, SweepResult
from raysweep.results.trial_view import TrialView

if TYPE_CHECKING:
    from raysweep.config.schema import SweepSpec
    from raysweep.rundir import RunDir


def collect_result(
    spec: SweepSpec, run_dir: RunDir, trials: Sequence[TrialView], started: float
) -> SweepResult:
    """The SweepResult of ``trials`` (every trial of the run), timed from ``started``."""
    result = collect_spec_trials(spec, run_dir, trials)
    result.warnings = result_warnings(spec, result)
    # to the precision results.json keeps: the reports written now and the ones `sweep report`
    # writes later from results.json then read the same time (1.1501 s was "1.2 s", then "1.1 s")
    result.wall_time_s = round(time.monotonic() - started, WALL_TIME_DECIMALS)
    return result


def result_warnings(spec: SweepSpec, result: SweepResult) -> list[str]:
    """What the trainable says of the best trial (trainables/describe.py)."""
    from raysweep.trainables.describe import best_trial_warnings

    best = result.best()
    return [] if best is None else best_trial_warnings(spec, best.trial_id, best.last)


def write_outputs(result: SweepResult, run_dir: RunDir) -> None:
    """results.json/csv, best_config.json, report.txt and report.html."""
    from raysweep.report.build import write_reports  # plotly and Optuna's importance: lazily

    run_dir.write_results(result)
    write_reports(run_dir, result, status="completed" if result.succeeded else "failed")
