"""SweepResult + spec -> Optuna trials: sweep.json's space as distributions, trials as FrozenTrial.

Used twice: ``sweep export-optuna`` writes every trial with its Optuna state, and the
report feeds Optuna's importance evaluators and plots with the trials that reported
the metric. Optuna needs each parameter value inside its distribution; the
distributions come from the spec, widened to what the trials really ran (a
``quniform`` rounds to multiples of ``q``, which may land past ``high``), and a
``step`` Optuna would not accept for the values seen is dropped.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import optuna
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from optuna.trial import FrozenTrial, TrialState

from raysweep.config.schema import SweepSpec
from raysweep.config.space import (
    ChoiceParam,
    GridParam,
    IntParam,
    LogUniformParam,
    QUniformParam,
    UniformParam,
)
from raysweep.results.records import SweepResult, TrialRecord

Curves = Mapping[str, Sequence[tuple[int, float]]]  # trial id -> (iteration, metric) points

# raysweep's trial status -> Optuna's trial state (export)
STATES: dict[str, TrialState] = {
    "completed": TrialState.COMPLETE,
    "stopped": TrialState.PRUNED,
    "errored": TrialState.FAIL,
    "running": TrialState.FAIL,  # an unfinished run's trial: it did not end by itself
    "pending": TrialState.WAITING,
}


def optuna_value(value: Any) -> Any:
    """A config value as Optuna stores it: JSON text for a list or an object."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return json.dumps(value, sort_keys=True)


def distributions(spec: SweepSpec, result: SweepResult) -> dict[str, BaseDistribution]:
    """Optuna distribution of each sampled parameter, covering every value the trials ran."""
    out: dict[str, BaseDistribution] = {}
    for name, param in spec.space.items():
        seen = [optuna_value(t.config[name]) for t in result.trials if name in t.config]
        if isinstance(param, ChoiceParam | GridParam):
            choices = [optuna_value(v) for v in param.values]
            choices += [v for v in dict.fromkeys(seen) if v not in choices]
            out[name] = CategoricalDistribution(choices)
        elif isinstance(param, IntParam):
            ints = [int(v) for v in seen if _is_number(v)]
            ilow, ihigh = min([param.low, *ints]), max([param.high, *ints])
            step = param.step if all((v - ilow) % param.step == 0 for v in ints) else 1
            ihigh -= (ihigh - ilow) % step
            out[name] = IntDistribution(ilow, ihigh, log=param.log, step=step)
        elif isinstance(param, UniformParam | LogUniformParam | QUniformParam):
            floats = [float(v) for v in seen if _is_number(v)]
            low, high = min([param.low, *floats]), max([param.high, *floats])
            out[name] = FloatDistribution(low, high, log=isinstance(param, LogUniformParam))
    return out


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def frozen_trial(
    record: TrialRecord,
    state: TrialState,
    value: float | None,
    dists: Mapping[str, BaseDistribution],
    curve: Sequence[tuple[int, float]] = (),
    attrs: bool = True,
) -> FrozenTrial:
    """One trial for Optuna: its parameters, state, value, intermediate values and times;
    with ``attrs``, raysweep's trial id, index, status, seed, iterations and error text."""
    params = {k: optuna_value(record.config[k]) for k in dists if k in record.config}
    user_attrs: dict[str, Any] = {}
    if attrs:
        user_attrs = {
            "raysweep_trial_id": record.trial_id,
            "raysweep_index": record.index,
            "raysweep_status": record.status,
            "seed": record.seed,
            "iterations": record.iterations,
        }
        if record.error:
            user_attrs["error"] = record.error
    trial = optuna.trial.create_trial(
        state=state,
        value=value if state == TrialState.COMPLETE else None,
        params=params,
        distributions={k: dists[k] for k in params},
        user_attrs=user_attrs,
        intermediate_values={int(step): float(v) for step, v in curve},
    )
    start, end = _time(record.started_at), _time(record.ended_at)
    if start is not None and state != TrialState.WAITING:
        trial.datetime_start = start
    if end is not None and state.is_finished():
        trial.datetime_complete = max(end, trial.datetime_start or end)
    return trial


def _time(iso: str | None) -> datetime | None:
    if not iso:
        return None
    return datetime.strptime(iso, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def final_value(record: TrialRecord, metric: str) -> float | None:
    """A trial's final reported metric (its best when the last row lacks it)."""
    for value in (record.last.get(metric), record.best_metric):
        if isinstance(value, int | float) and _is_number(value):
            return float(value)
    return None


def export_trials(spec: SweepSpec, result: SweepResult, curves: Curves) -> list[FrozenTrial]:
    """Every trial, in suggestion order: completed COMPLETE with its final value,
    stopped PRUNED, errored FAIL; each with its params and intermediate values."""
    dists = distributions(spec, result)
    trials = []
    for record in result.trials:
        state = STATES[record.status]
        value = final_value(record, result.metric)
        if state == TrialState.COMPLETE and value is None:
            state = TrialState.FAIL  # completed without ever reporting the metric
        trials.append(frozen_trial(record, state, value, dists, curves.get(record.trial_id, ())))
    return trials


def scored_study(spec: SweepSpec, result: SweepResult) -> optuna.Study | None:
    """An in-memory study of the trials that reported the metric (completed or stopped
    early), each COMPLETE with the value that ranks it (``rank_by``): what the report's
    importance and plots read. None when no parameter is sampled or no trial has a value."""
    dists = distributions(spec, result)
    scored = [t for t in result.ranked() if set(dists) & set(t.config)]
    if not dists or not scored:
        return None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="minimize" if result.mode == "min" else "maximize")
    by_index = sorted(scored, key=lambda t: (t.index, t.trial_id))
    complete = TrialState.COMPLETE
    study.add_trials(
        [frozen_trial(t, complete, result.value(t), dists, attrs=False) for t in by_index]
    )
    return study
