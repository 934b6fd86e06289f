"""GBM problems scored on held-out rows: a test split that selection never sees.

A scikit-learn bundled dataset (no download) is cut once into a *selection pool* and a
*test split* (stratified, ``test_fraction``, ``test_seed``). Only the pool reaches
the optimizers: raysweep's built-in trainable reads it from a Parquet file written here
(``selection_file``; ``trainable_args.dataset`` names it) and splits it into train and
validation as it splits any file (``split_seed``, ``val_fraction``); the peers' side
splits the same pool the same way (checked by ``split_sha256``). The value the
optimizers see is the validation loss after ``z`` reports; the regret is the test loss
of the configuration after every report minus the best test loss of a reference search
(``reference``), so it measures what selection on the validation rows found, not how
well it fitted them. Each library's fit is given to the problem (search_quality_lgbm.py,
search_quality_xgb.py).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.workloads.search_quality_space import Param, random_configs

REPO = Path(__file__).resolve().parents[2]
DATA_DIR = REPO / "benchmarks" / "results" / "search_quality-data"  # git-ignored
TARGET = "target"
# the reference searches' results, with the command, seed and date of each
REFERENCES = Path(__file__).with_name("search_quality_references.json")


@dataclass(frozen=True)
class Split:
    """The arrays of one held-out problem (float32 features, int64 class indices)."""

    X_train: np.ndarray
    X_val: np.ndarray
    y_train: np.ndarray
    y_val: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    names: list[str]


@dataclass(frozen=True)
class Reference:
    """The best held-out score of a long random search (what regrets are measured from),
    with the draws that made it: ``fits`` configurations of ``seed``, by ``command``."""

    optimum: float
    config: dict[str, Any] = field(default_factory=dict)
    fits: int = 2000
    seed: int = 0
    command: str = ""
    date: str = ""  # empty: not taken yet
    taken_on: str = ""  # how long it took, where, with which versions

    @staticmethod
    def of(problem: str) -> Reference:
        """``problem``'s reference as recorded in search_quality_references.json."""
        recorded = json.loads(REFERENCES.read_text(encoding="utf-8"))
        return Reference(**recorded[problem])


# (split, config, reports, seed) -> validation loss per report, test loss at the end
Fit = Callable[[Split, Mapping[str, Any], int, int], tuple[list[float], float]]


def split_sha256(arrays: Sequence[np.ndarray]) -> str:
    """sha256 of the arrays' dtypes, shapes and bytes, in order."""
    digest = hashlib.sha256()
    for array in arrays:
        digest.update(str(array.dtype).encode() + str(array.shape).encode() + array.tobytes())
    return digest.hexdigest()


def log_loss(labels: np.ndarray, probs: np.ndarray) -> float:
    """Log loss as raysweep's ``val_metrics`` computes it (binary or multiclass)."""
    y = np.asarray(labels, dtype=np.int64)
    p = np.asarray(probs, dtype=np.float64)
    if p.ndim == 1:
        p1 = np.clip(p, 1e-15, 1 - 1e-15)
        return float(-np.mean(np.where(y == 1, np.log(p1), np.log1p(-p1))))
    p = np.clip(p, 1e-15, None)
    p /= p.sum(axis=1, keepdims=True)
    return float(-np.mean(np.log(p[np.arange(len(y)), y])))


class HeldOutProblem:
    """A GBM problem on a bundled dataset with a held-out test split: the same interface
    as ``MFHartmann`` (value, regret, params), ``fit`` training its library."""

    test_fraction = 0.3
    test_seed = 0
    split_seed = 0
    val_fraction = 0.25  # raysweep's default trainable_args.val_fraction
    cheap_regret = False  # a full fit: worth computing only for a new incumbent
    version = "heldout"  # recorded runs of the problem scored otherwise are not reused

    def __init__(self, name: str, library: str, dataset: str, params: tuple[Param, ...],
                 reports: int, rounds_per_report: int, sha256: str, reference: Reference,
                 fit: Fit) -> None:  # fmt: skip
        self.name, self.library, self.dataset, self.params = name, library, dataset, params
        self.reports, self.rounds_per_report = reports, rounds_per_report
        self.sha256 = (
            sha256  # of the six arrays (Split): a scikit-learn that splits otherwise fails
        )
        self.reference_search, self._fit = reference, fit
        self._curves: dict[tuple[float, ...], list[float]] = {}
        self._test: dict[tuple[float, ...], float] = {}

    def fresh(self) -> HeldOutProblem:
        """The same problem with nothing cached."""
        return HeldOutProblem(self.name, self.library, self.dataset, self.params, self.reports,
                              self.rounds_per_report, self.sha256, self.reference_search,
                              self._fit)  # fmt: skip

    @property
    def reference(self) -> float:
        """The value regrets are measured from (minimized): the reference search's best."""
        return self.reference_search.optimum

    @property
    def max_fidelity(self) -> int:
        return self.reports

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.params]

    def train(self, config: Mapping[str, Any], reports: int,
              seed: int = 0) -> tuple[list[float], float]:  # fmt: skip
        """Validation loss at each of ``reports`` reports and the test loss at the end."""
        return self._fit(self.split, config, reports, seed)

    def sweep_fields(self) -> dict[str, Any]:
        """What a sweep.json of this problem sets: the built-in trainable on the pool, locally."""
        return {
            "trainable": self.library,
            "trainable_args": {
                "dataset": str(self.selection_file()),
                "target": TARGET,
                "split_seed": self.split_seed,
                "val_fraction": self.val_fraction,
                "num_boost_round": self.reports * self.rounds_per_report,
                "report_every": self.rounds_per_report,
            },
            "metric": "val_loss",
            "execution": "local",
            "checkpoint": {"frequency": 0},
        }

    def value(self, config: Mapping[str, Any], z: int) -> float:
        """The validation loss after ``z`` reports' rounds."""
        return self.curve(config, z)[z - 1]

    def regret(self, config: Mapping[str, Any]) -> float:
        """The test loss after every report minus the reference search's best."""
        self.curve(config, self.reports)
        return self._test[self._key(config)] - self.reference

    def curve(self, config: Mapping[str, Any], reports: int) -> list[float]:
        """Validation losses of the first ``reports`` reports or more (cached per config).

        A fit of fewer rounds grows the same first trees, so a cached longer curve answers
        a shorter request; a longer one fits at least 3 times the cached length, so a peer
        asking report by report pays about one full fit per configuration, not 14.
        """
        key = self._key(config)
        cached = len(self._curves.get(key, ()))
        if cached < reports:
            want = min(self.reports, max(reports, 3 * cached))
            self._curves[key], test = self.train(config, want)
            if want == self.reports:
                self._test[key] = test
        return self._curves[key]

    def _key(self, config: Mapping[str, Any]) -> tuple[float, ...]:
        return tuple(float(p.cast(config[p.name])) for p in self.params)

    @cached_property
    def split(self) -> Split:
        """Pool and test split, then train/validation as the trainable splits the pool."""
        from sklearn.model_selection import train_test_split

        X, y, test_X, test_y, names = self._pool_and_test
        _, y = np.unique(y, return_inverse=True)  # as raysweep's _split
        parts = train_test_split(X.astype(np.float32), y.astype(np.int64),
                                 test_size=self.val_fraction, random_state=self.split_seed,
                                 stratify=y.astype(np.int64))  # fmt: skip
        arrays = [np.ascontiguousarray(a) for a in (*parts, test_X, test_y)]
        split = Split(*arrays, names=names)
        digest = split_sha256(arrays)
        if self.sha256 != "to-be-recorded" and digest != self.sha256:
            raise RuntimeError(f"{self.name}: {self.dataset}'s split differs from the one "
                               f"recorded: sha256 {digest}, not {self.sha256}")  # fmt: skip
        return split

    @cached_property
    def _pool_and_test(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[str]]:
        """The selection pool and the test split of the bundled dataset, in that order."""
        from sklearn import datasets
        from sklearn.model_selection import train_test_split

        bunch = getattr(datasets, f"load_{self.dataset}")()
        X, y = np.asarray(bunch.data).astype(np.float32), np.asarray(bunch.target, np.int64)
        pool_X, test_X, pool_y, test_y = train_test_split(
            X, y, test_size=self.test_fraction, random_state=self.test_seed, stratify=y
        )
        names = [re.sub(r"[^\w.\-]+", "_", str(n)) for n in bunch.feature_names]
        return pool_X, pool_y, test_X, test_y, names

    def selection_file(self) -> Path:
        """The selection pool as a Parquet file (features and ``target``): all the
        optimizers' trainable reads. Named by its content's digest; written once."""
        import pandas as pd

        X, y, _, _, names = self._pool_and_test
        digest = split_sha256([X, y])[:12]
        path = DATA_DIR / f"{self.name}-pool-{digest}.parquet"
        if not path.is_file():
            frame = pd.DataFrame(X, columns=names)
            frame[TARGET] = y
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{time.time_ns()}.tmp")
            frame.to_parquet(tmp, index=False)
            tmp.replace(path)
        return path


def reference(problem: HeldOutProblem, fits: int, seed: int) -> dict[str, Any]:
    """The best test loss of ``fits`` random configurations drawn with ``seed``."""
    started = time.perf_counter()
    best: tuple[float, dict[str, Any]] = (math.inf, {})
    for i, config in enumerate(random_configs(problem.params, fits, seed)):
        test = problem.train(config, problem.reports)[1]
        best = min(best, (test, config), key=lambda b: b[0])
        if (i + 1) % 25 == 0:  # the best so far, should the search be cut short
            print(json.dumps({"fits": i + 1, "optimum": best[0], "config": best[1]}),
                  file=sys.stderr, flush=True)  # fmt: skip
    return {"optimum": best[0], "config": best[1], "fits": fits, "seed": seed,
            "seconds": time.perf_counter() - started, "split_sha256": problem.sha256}  # fmt: skip


def rung_agreement(problem: HeldOutProblem, fits: int, seed: int) -> dict[str, Any]:
    """How each ASHA rung (1, 3, 9, ... reports, reduction factor 3) ranks ``fits`` random
    configurations of ``seed`` against what selection is scored by: Spearman's rho of the
    validation loss there with the held-out regret after every report, and of each
    numeric parameter with the validation loss at the first rung."""
    from scipy.stats import spearmanr

    configs = random_configs(problem.params, fits, seed)
    rungs = [3**k for k in range(10) if 3**k <= problem.max_fidelity]
    values = {z: [problem.value(c, z) for c in configs] for z in rungs}
    regrets = [problem.regret(c) for c in configs]
    return {
        "fits": fits, "seed": seed,
        "rho_with_held_out_regret": {z: round(float(spearmanr(v, regrets)[0]), 3)
                                     for z, v in values.items()},
        "rho_of_params_with_first_rung": {
            p.name: round(float(spearmanr([c[p.name] for c in configs], values[1])[0]), 3)
            for p in problem.params
        },
    }  # fmt: skip


def reference_main(problem: HeldOutProblem, argv: Sequence[str] | None, doc: str) -> int:
    """``python -m <module> --reference|--rungs [--fits N] [--seed S]``: print the reference
    search, or how each rung ranks configurations (:func:`rung_agreement`)."""
    import argparse

    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--reference", action="store_true", help="run the long random search")
    p.add_argument("--rungs", action="store_true",
                   help="how each ASHA rung ranks random configurations against the held-out "
                        "regret (try --fits 150 --seed 7)")  # fmt: skip
    p.add_argument("--fits", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.rungs:
        json.dump(rung_agreement(problem, args.fits, args.seed), sys.stdout)
    elif args.reference:
        json.dump(reference(problem, args.fits, args.seed), sys.stdout)
    else:
        p.error("nothing to do: pass --reference or --rungs")
    print()
    return 0
