"""One tuned parameter of a search-quality problem, as every optimizer's space needs it.

The problems (Hartmann's unit cube, LightGBM's learning rate, leaves, HPOLib's
grid of network settings) are described once here and translated into each
optimizer's own space: sweep.json for raysweep's recipes, Optuna's ``suggest_*``,
ConfigSpace (DEHB, SMAC3, hpbandster) and Syne Tune's domains
(benchmarks/workloads/search_quality_peers.py). Standard library only: the peers'
environment imports it too.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Param:
    """A numeric parameter in ``[low, high]`` (``log``: sampled on a log scale), or one of
    ``choices`` where it has them (``Param.choice``)."""

    name: str
    low: float
    high: float
    log: bool = False
    integer: bool = False
    choices: tuple[Any, ...] = ()

    @classmethod
    def choice(cls, name: str, values: tuple[Any, ...] | list[Any]) -> Param:
        """A categorical parameter: one of ``values`` (numbers or strings)."""
        return cls(name, 0.0, 0.0, choices=tuple(values))

    def sweep_json(self) -> dict[str, Any]:
        """The parameter as sweep.json's ``space`` writes it."""
        if self.choices:
            return {"type": "choice", "values": list(self.choices)}
        if self.integer:
            return {"type": "int", "low": int(self.low), "high": int(self.high), "log": self.log}
        kind = "loguniform" if self.log else "uniform"
        return {"type": kind, "low": self.low, "high": self.high}

    def cast(self, value: Any) -> Any:
        """A value an optimizer proposed, as the objective takes it: ints for integers, the
        matching choice for a categorical one (a float choice matched within rounding), a
        number outside ``[low, high]`` at the nearer end (Syne Tune's BOHB 0.16 proposed
        ``num_leaves`` 1 for ``lograndint(4, 128)``: LightGBM refuses it)."""
        if self.choices:
            for choice in self.choices:
                if choice == value or (
                    isinstance(choice, float) and not isinstance(value, str)
                    and math.isclose(choice, float(value), rel_tol=1e-9, abs_tol=1e-12)
                ):  # fmt: skip
                    return choice
            raise ValueError(f"{self.name}: {value!r} is not one of {list(self.choices)}")
        number = min(max(float(value), self.low), self.high)
        return round(number) if self.integer else number


def random_configs(params: Sequence[Param], n: int, seed: int) -> list[dict[str, float | int]]:
    """``n`` configurations drawn uniformly (log-uniformly where ``log``) from numeric
    ``params`` by numpy's generator of ``seed``: the draws of the reference searches."""
    import numpy as np

    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        config: dict[str, float | int] = {}
        for p in params:
            if p.log:
                x = math.exp(rng.uniform(math.log(p.low), math.log(p.high)))
            else:
                x = rng.uniform(p.low, p.high)
            config[p.name] = p.cast(min(max(x, p.low), p.high))
        out.append(config)
    return out
