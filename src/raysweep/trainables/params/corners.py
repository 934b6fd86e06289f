"""The corners of a search space: the values whose validity stands for the whole range.

For a range, its two ends as the searcher can produce them (``uniform`` and
``loguniform`` never reach ``high``: the largest float below it stands for
it; an ``int`` with a ``step`` ends at the last step); for ``choice`` and
``grid``, every value.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from raysweep.config.space import (
    ChoiceParam,
    GridParam,
    IntParam,
    LogUniformParam,
    QUniformParam,
    UniformParam,
)


@dataclass(frozen=True)
class Corner:
    """One value of a parameter and where in its definition it comes from."""

    value: Any
    where: str  # "low", "high" or "value"
    written: Any = None  # the bound as written when ``value`` is the float just below it

    def describe(self, key: str) -> str:
        """``num_leaves=-5 (the low end of its range)``."""
        shown = json.dumps(self.value if self.written is None else self.written, default=str)
        if self.where == "value":
            return f"{key}={shown}"
        return f"{key}={shown} (the {self.where} end of its range)"


def corners(param: Any) -> list[Corner]:
    """The corner values of a sampled parameter (a ``config.space`` model)."""
    if isinstance(param, UniformParam | LogUniformParam):
        below = math.nextafter(param.high, param.low)
        return [Corner(param.low, "low"), Corner(below, "high", written=param.high)]
    if isinstance(param, QUniformParam):
        return [Corner(_quantize(param.low, param.q), "low"), Corner(_top_q(param), "high")]
    if isinstance(param, IntParam):
        top = param.high - (param.high - param.low) % param.step
        return [Corner(param.low, "low"), Corner(top, "high")]
    if isinstance(param, ChoiceParam | GridParam):
        out: list[Corner] = []
        seen: set[str] = set()
        for value in param.values:
            key = json.dumps(value, sort_keys=True, default=str)
            if key not in seen:
                seen.add(key)
                out.append(Corner(value, "value"))
        return out
    raise TypeError(f"not a sampled parameter: {param!r}")


def representative(param: Any) -> Any:
    """One value of a parameter (its first corner), or the constant itself."""
    try:
        return corners(param)[0].value
    except TypeError:
        return param


def _quantize(value: float, q: float) -> float:
    """Ray Tune's rounding of a ``quniform`` sample: ``round(value / q) * q``."""
    return float(round(value / q) * q)


def _top_q(param: QUniformParam) -> float:
    return _quantize(param.high, param.q)
