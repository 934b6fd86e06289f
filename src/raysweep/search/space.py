"""Convert the sweep.json parameter DSL to Ray Tune search-space domains."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ray import tune

from raysweep.config.space import (
    ChoiceParam,
    GridParam,
    IntParam,
    LogUniformParam,
    QUniformParam,
    UniformParam,
)


def to_tune_domain(param: Any) -> Any:
    """One DSL parameter as a Ray Tune domain; constants pass through unchanged."""
    if isinstance(param, UniformParam):
        return tune.uniform(param.low, param.high)
    if isinstance(param, LogUniformParam):
        return tune.loguniform(param.low, param.high)
    if isinstance(param, QUniformParam):
        return tune.quniform(param.low, param.high, param.q)
    if isinstance(param, IntParam):
        if param.log:
            return tune.lograndint(param.low, param.high + 1)
        if param.step > 1:
            return tune.qrandint(param.low, param.high, param.step)  # upper bound inclusive
        return tune.randint(param.low, param.high + 1)  # randint excludes its upper bound
    if isinstance(param, ChoiceParam):
        return tune.choice(param.values)
    if isinstance(param, GridParam):
        return tune.grid_search(param.values)
    return param


def to_param_space(space: Mapping[str, Any]) -> dict[str, Any]:
    """The whole ``space`` block as a Ray Tune ``param_space``."""
    return {name: to_tune_domain(param) for name, param in space.items()}
