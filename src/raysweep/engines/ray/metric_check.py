"""A result without the sweep's metric ends the sweep with one line naming what was reported.

Ray Tune's own check raises a ValueError inside its controller, which reached the user
as about 100 lines of two tracebacks, the metric's name inside a dump of the result.
raysweep turns that check off (``TUNE_DISABLE_STRICT_METRIC_CHECKING``, Ray's documented
switch; engines/ray/ray_env.py) and makes the same one here, for every result a trial reports,
as Ray's did: ``MetricNotReported`` (exit 1) names the metric asked for, where the
config asks for it, and the metrics the trial did report, with the nearest of them.
A result with nothing but Ray's own keys (a trial that returned without reporting) is
not checked, as Ray does not.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ray import tune

from raysweep.config.schema import SweepSpec
from raysweep.errors import MetricNotReported
from raysweep.report.collect import RAY_BOOKKEEPING
from raysweep.trainables.params.names import did_you_mean, nearest

_RAY_COUNTERS = {"training_iteration", "time_total_s", "trial_id", "done"}


def wanted_metrics(spec: SweepSpec) -> list[tuple[str, str]]:
    """(config key, metric) for each metric the searcher and scheduler read."""
    where = "metric" if spec.objectives is None else "objectives"
    wanted = [(where, metric) for metric, _ in spec.objective_pairs]
    scheduler_metric = getattr(spec.scheduler, "metric", None)
    if scheduler_metric:
        wanted.append(("scheduler.metric", scheduler_metric))
    return wanted


def reported_names(result: Mapping[str, Any], prefix: str = "") -> list[str]:
    """The metric names of a result as Ray flattens them (``val/loss``), Ray's own left out."""
    names: list[str] = []
    for key, value in result.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            if name != "config":
                names.extend(reported_names(value, f"{name}/"))
        elif name not in RAY_BOOKKEEPING and name not in _RAY_COUNTERS:
            names.append(name)
    return names


def missing_metric_error(
    wanted: list[tuple[str, str]], trial_id: str, result: Mapping[str, Any]
) -> MetricNotReported | None:
    """The error for ``result`` when it lacks a wanted metric (None when it has them all)."""
    reported = reported_names(result)
    if not reported:
        return None
    for where, metric in wanted:
        if metric not in reported:
            return MetricNotReported(
                f"{where}: {metric!r} was not in what trial {trial_id} reported; it reported: "
                f"{', '.join(sorted(reported))}{did_you_mean(nearest(metric, reported))} "
                f"(fix {where} in the config, or report {metric!r} with tune.report)"
            )
    return None


class MetricCheck(tune.Callback):
    """Raises :class:`MetricNotReported` at the first result without a wanted metric."""

    def __init__(self, wanted: list[tuple[str, str]]) -> None:
        self.wanted = wanted

    def on_trial_result(
        self, iteration: int, trials: list[Any], trial: Any, result: dict[str, Any], **info: Any
    ) -> None:
        error = missing_metric_error(self.wanted, trial.trial_id, result)
        if error is not None:
            raise error
