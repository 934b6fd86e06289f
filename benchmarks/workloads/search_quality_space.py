"""One tuned parameter of a search-quality problem, as every optimizer's space needs it.

The problems (Hartmann's unit cube, LightGBM's learning rate, leaves, ...) are
described once here and translated into each optimizer's own space: sweep.json
for raysweep's recipes, Optuna's ``suggest_*``, ConfigSpace (DEHB, SMAC3) and
Syne Tune's domains (benchmarks/workloads/search_quality_peers.py). Standard
library only: the peers' environment imports it too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Param:
    """A numeric parameter in ``[low, high]``; ``log``: sampled on a log scale."""

    name: str
    low: float
    high: float
    log: bool = False
    integer: bool = False

    def sweep_json(self) -> dict[str, Any]:
        """The parameter as sweep.json's ``space`` writes it."""
        if self.integer:
            return {"type": "int", "low": int(self.low), "high": int(self.high), "log": self.log}
        kind = "loguniform" if self.log else "uniform"
        return {"type": kind, "low": self.low, "high": self.high}

    def cast(self, value: Any) -> float | int:
        """A value an optimizer proposed, as the objective takes it (ints for integers)."""
        return round(float(value)) if self.integer else float(value)
