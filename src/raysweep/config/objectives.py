"""Several objectives: ``"metric": ["sharpe", "max_drawdown"], "mode": ["max", "min"]``.

sweep.json may name several metrics, each with its mode. The spec keeps them in
``objectives`` and the first one as ``metric``/``mode``, which everything that
follows one number (live progress, ``best_config.json``, the nightly history)
goes on using. What several objectives change:

* the searcher optimises all of them: Optuna with a multi-objective sampler
  (``tpe``, ``nsga2``, ``gp`` or ``random``; not ``cmaes``), or ``random``/``grid``,
  which need no metric; HyperOpt optimises one metric and is refused;
* a scheduler that stops trials (``asha``, ``hyperband``, ``median``) compares them
  on one metric: the sweep refuses a list unless ``scheduler.metric`` (and
  ``scheduler.mode``) name it;
* results.json marks each trial ``pareto_optimal``; ``sweep best`` lists the front
  (``report/pareto.py``).

Pure data, no Ray.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from pydantic import (
    SerializationInfo,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from raysweep.config.base import StrictModel

MULTI_OBJECTIVE_ALGORITHMS: tuple[str, ...] = ("optuna", "random", "grid")
SINGLE_OBJECTIVE_SAMPLERS: tuple[str, ...] = ("cmaes",)


class Objective(StrictModel):
    """One metric of a multi-objective sweep and its direction."""

    metric: str
    mode: Literal["min", "max"]


class SchedulerMetric(StrictModel):
    """``metric``/``mode`` of a scheduler that stops trials: only for several objectives."""

    metric: str | None = None
    mode: Literal["min", "max"] | None = None
    # fields added later, None in a spec.json written before them: left out of spec.json
    # while unset, so old specs and their hashes stay as they were
    OMITTED_WHEN_UNSET: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")
    def _omit_unset(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        data = handler(self)
        if not isinstance(data, dict):
            return data
        if data.get("metric") is None and data.get("mode") is None:
            data.pop("metric", None)  # a one-metric sweep's scheduler serialises as it did
            data.pop("mode", None)
        for name in self.OMITTED_WHEN_UNSET:
            if data.get(name) is None:
                data.pop(name, None)
        return data

    @model_validator(mode="after")
    def _both_or_neither(self) -> SchedulerMetric:
        if (self.metric is None) != (self.mode is None):
            raise ValueError("metric: give scheduler.metric and scheduler.mode together")
        return self


def split_objectives(data: Any) -> Any:
    """sweep.json data whose ``metric``/``mode`` lists become ``objectives`` + the first one."""
    if not isinstance(data, Mapping) or not isinstance(data.get("metric"), list):
        return data
    metrics, modes = data["metric"], data.get("mode")
    if not isinstance(modes, list) or len(modes) != len(metrics):
        raise ValueError(
            f"mode: a list with one mode per metric ({len(metrics)}), e.g. "
            '"metric": ["sharpe", "max_drawdown"], "mode": ["max", "min"]'
        )
    if len(metrics) < 2:
        raise ValueError("metric: a list needs two metrics or more (or give one as a string)")
    if not all(isinstance(m, str) and m for m in metrics) or len(set(metrics)) != len(metrics):
        raise ValueError(f"metric: distinct metric names (got {metrics})")
    if data.get("objectives") is not None:
        raise ValueError("objectives: give either a metric list or objectives, not both")
    objectives = [{"metric": m, "mode": d} for m, d in zip(metrics, modes, strict=True)]
    return {**data, "metric": metrics[0], "mode": modes[0], "objectives": objectives}


def check_objectives(
    objectives: list[Objective] | None,
    metric: str,
    mode: str,
    algorithm: str,
    sampler: str | None,
    scheduler: Any,
) -> None:
    """ValueError (``path: why``) when the search or the scheduler cannot serve these objectives."""
    declared = getattr(scheduler, "metric", None)
    if not objectives:
        if declared is not None:
            raise ValueError(
                "scheduler.metric: only for a sweep with several objectives (the scheduler "
                "follows the sweep's metric)"
            )
        return
    first = objectives[0]
    if (first.metric, first.mode) != (metric, mode):
        raise ValueError("metric: must be the first of the objectives")
    if algorithm not in MULTI_OBJECTIVE_ALGORITHMS:
        raise ValueError(
            f"metric: several objectives need search.algorithm "
            f"{', '.join(MULTI_OBJECTIVE_ALGORITHMS)} (got {algorithm!r}; it optimises one metric)"
        )
    if algorithm == "optuna" and sampler in SINGLE_OBJECTIVE_SAMPLERS:
        raise ValueError(
            f"search.options.sampler: {sampler!r} optimises one metric; with several "
            "objectives use tpe, nsga2, gp or random"
        )
    if scheduler.type != "fifo" and declared is None:
        raise ValueError(
            f"scheduler.metric: {scheduler.type} stops trials by comparing one metric and the "
            f"sweep has {len(objectives)} ({', '.join(o.metric for o in objectives)}); name "
            "it with scheduler.metric and scheduler.mode, or use the fifo scheduler"
        )


def objective_pairs(
    objectives: list[Objective] | None, metric: str, mode: str
) -> list[tuple[str, str]]:
    """``[(metric, mode), ...]``: every objective, or the one metric."""
    if objectives:
        return [(o.metric, o.mode) for o in objectives]
    return [(metric, mode)]
