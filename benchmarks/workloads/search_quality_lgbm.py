"""The users' own workload in the search-quality benchmark: LightGBM, boosting rounds as fidelity.

raysweep's built-in ``lightgbm`` trainable on scikit-learn's bundled breast-cancer
set (no download), ``REPORTS`` reports of ``ROUNDS_PER_REPORT`` boosting rounds;
fidelity ``z`` is the number of reports, the value at ``z`` the validation log
loss after ``z * ROUNDS_PER_REPORT`` rounds. The peers (another virtual
environment, no raysweep there) evaluate the same function through this module,
written with plain LightGBM and scikit-learn as the built-in trainable trains:
the same split (``trainable_args.split_seed``, checked against ``SPLIT_SHA256``),
the same parameters (``seed``, ``num_threads=1``, ``deterministic``,
``force_row_wise``, ``objective=binary``, ``metric=None``), the same log loss
at the same rounds. tests/benchmarks/test_search_quality_lgbm.py checks it is bit
for bit the trainable's ``val_loss``.

The space has no row or column sampling (``feature_fraction``, bagging, GOSS):
those draw from the trial's seed, which raysweep derives from the trial index,
so a configuration's value would depend on when it ran. Without them LightGBM
is deterministic and the seed changes nothing (the test checks that too), so the
value is a function of the configuration alone, as for Hartmann.

Regret: the full-fidelity value of the incumbent minus ``REFERENCE_OPTIMUM``, the
best of a long random search recorded below with its seed and command.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import sys
import time
from collections.abc import Mapping
from functools import cached_property
from typing import Any

from benchmarks.workloads.search_quality_space import Param
from benchmarks.workloads.search_quality_space import random_configs as draw

DATASET = "breast_cancer"
SPLIT_SEED = 0
VAL_FRACTION = 0.25  # raysweep's default trainable_args.val_fraction
ROUNDS_PER_REPORT = 10
REPORTS = 27
# sha256 of the float32/int64 arrays X_train, X_val, y_train, y_val: a scikit-learn whose
# split differs (the peers' environment pins another version) fails instead of drifting.
SPLIT_SHA256 = "1df1c6b64305b654761466b93a3766b16fedc3d0e73f339abbe4a83a0a874aec"
# The names are LightGBM's canonical ones: sweep.json's alias hook would rename
# ``min_child_samples`` to ``min_data_in_leaf`` in the configs raysweep records.
PARAMS = (
    Param("learning_rate", 0.005, 0.3, log=True),
    Param("num_leaves", 4, 128, log=True, integer=True),
    Param("min_data_in_leaf", 2, 64, log=True, integer=True),
    Param("lambda_l1", 1e-3, 10.0, log=True),
    Param("lambda_l2", 1e-3, 10.0, log=True),
)
# The best full-fidelity val_loss of REFERENCE_FITS random configurations drawn with
# REFERENCE_SEED (random_configs), made by REFERENCE_COMMAND on REFERENCE_DATE (366.5 s at
# nice 19 on a shared 2-core AMD EPYC; lightgbm 4.7.0, scikit-learn 1.9.1). An optimizer
# may beat it: its regret is then negative.
REFERENCE_OPTIMUM = 0.1313047593616447
REFERENCE_CONFIG = {"learning_rate": 0.036239031621576386, "num_leaves": 20,
                    "min_data_in_leaf": 51, "lambda_l1": 0.006136817646735149,
                    "lambda_l2": 0.1758476883717964}  # fmt: skip
REFERENCE_FITS = 2000
REFERENCE_SEED = 0
REFERENCE_COMMAND = (
    "nice -n 19 python -m benchmarks.workloads.search_quality_lgbm --reference --fits 2000 --seed 0"
)
REFERENCE_DATE = "2026-11-27"


def lightgbm_params(config: Mapping[str, Any], seed: int = 0) -> dict[str, Any]:
    """The parameters raysweep's built-in trainable passes for ``config`` on one CPU."""
    owned = {"seed": seed, "num_threads": 1, "verbosity": -1, "deterministic": True,
             "device_type": "cpu", "force_row_wise": True}  # fmt: skip
    user = {p.name: p.cast(config[p.name]) for p in PARAMS}
    return {**owned, "objective": "binary", **user, **owned, "metric": "None"}


class LGBMProblem:
    """The problem ``lgbm``: the same interface as ``MFHartmann`` (value, regret, params)."""

    name = "lgbm"
    max_fidelity = REPORTS
    params = PARAMS
    cheap_regret = False  # a full fit: worth computing only for a new incumbent

    def __init__(self) -> None:
        self._curves: dict[tuple[float, ...], list[float]] = {}

    @property
    def names(self) -> list[str]:
        return [p.name for p in PARAMS]

    def sweep_fields(self) -> dict[str, Any]:
        """What a sweep.json of this problem sets: the built-in trainable, locally."""
        return {
            "trainable": "lightgbm",
            "trainable_args": {
                "dataset": DATASET,
                "split_seed": SPLIT_SEED,
                "num_boost_round": REPORTS * ROUNDS_PER_REPORT,
                "report_every": ROUNDS_PER_REPORT,
            },
            "metric": "val_loss",
            "execution": "local",
            "checkpoint": {"frequency": 0},
        }

    def value(self, config: Mapping[str, Any], z: int) -> float:
        """val_loss after ``z * ROUNDS_PER_REPORT`` rounds (a fit of that many rounds)."""
        return self.curve(config, z)[z - 1]

    def regret(self, config: Mapping[str, Any]) -> float:
        """The full-fidelity val_loss minus the reference optimum (a full fit)."""
        return self.curve(config, REPORTS)[-1] - REFERENCE_OPTIMUM

    def curve(self, config: Mapping[str, Any], reports: int) -> list[float]:
        """val_loss at the first ``reports`` reports, or more (cached per configuration).

        A fit of fewer rounds grows the same first trees (nothing in the space depends on
        the round count), so a cached longer curve answers a shorter request. A longer
        request fits at least 3 times the cached length: a peer that asks report by report
        (Optuna, Syne Tune) then costs about one full fit per configuration, not 14.
        """
        key = tuple(float(p.cast(config[p.name])) for p in PARAMS)
        cached = len(self._curves.get(key, ()))
        if cached < reports:
            self._curves[key] = self.fit(config, reports=min(REPORTS, max(reports, 3 * cached)))
        return self._curves[key]

    def fit(self, config: Mapping[str, Any], seed: int = 0, reports: int = REPORTS) -> list[float]:
        """A fit of ``reports`` reports' rounds as the built-in trainable runs it; val_loss
        at every report."""
        import lightgbm as lgb
        import numpy as np

        X_train, X_val, y_train, y_val, names = self.split
        losses: list[float] = []
        evaluated = 0

        def feval(preds: Any, _: Any) -> list[tuple[str, float, bool]]:
            nonlocal evaluated
            evaluated += 1
            if evaluated % ROUNDS_PER_REPORT:
                return []
            p1 = np.clip(np.asarray(preds, dtype=np.float64), 1e-15, 1 - 1e-15)
            labels = np.asarray(y_val, dtype=np.int64)
            loss = float(-np.mean(np.where(labels == 1, np.log(p1), np.log1p(-p1))))
            losses.append(loss)
            return [("val_loss", loss, False)]

        train_set = lgb.Dataset(X_train, y_train, feature_name=names)
        val_set = lgb.Dataset(X_val, y_val, reference=train_set)
        lgb.train(lightgbm_params(config, seed), train_set,
                  num_boost_round=reports * ROUNDS_PER_REPORT, valid_sets=[val_set],
                  valid_names=["val"], feval=feval, keep_training_booster=True)  # fmt: skip
        return losses

    @cached_property
    def split(self) -> tuple[Any, Any, Any, Any, list[str]]:
        """The train/validation split raysweep's trainable makes (checked by its digest)."""
        import numpy as np
        from sklearn.datasets import load_breast_cancer
        from sklearn.model_selection import train_test_split

        bunch = load_breast_cancer()
        _, y = np.unique(np.asarray(bunch.target), return_inverse=True)
        parts = train_test_split(np.asarray(bunch.data).astype(np.float32), y.astype(np.int64),
                                 test_size=VAL_FRACTION, random_state=SPLIT_SEED,
                                 stratify=y.astype(np.int64))  # fmt: skip
        arrays = [np.ascontiguousarray(a) for a in parts]
        digest = split_digest(arrays)
        if SPLIT_SHA256 != "to-be-recorded" and digest != SPLIT_SHA256:
            raise RuntimeError(f"{DATASET} split differs from raysweep's: sha256 {digest}, "
                               f"expected {SPLIT_SHA256} (scikit-learn version?)")  # fmt: skip
        names = [re.sub(r"[^\w.\-]+", "_", str(n)) for n in bunch.feature_names]
        return arrays[0], arrays[1], arrays[2], arrays[3], names


def split_digest(arrays: Any) -> str:
    """sha256 of the arrays' bytes, in order."""
    digest = hashlib.sha256()
    for array in arrays:
        digest.update(str(array.dtype).encode() + str(array.shape).encode() + array.tobytes())
    return digest.hexdigest()


def random_configs(n: int, seed: int) -> list[dict[str, float | int]]:
    """``n`` configurations drawn uniformly (log-uniformly where ``log``) from ``PARAMS``."""
    return draw(PARAMS, n, seed)


def reference(fits: int, seed: int) -> dict[str, Any]:
    """The best full-fidelity val_loss of a random search: the reference optimum."""
    problem, started = LGBMProblem(), time.perf_counter()
    best: tuple[float, dict[str, Any]] = (math.inf, {})
    for i, config in enumerate(random_configs(fits, seed)):
        loss = problem.fit(config)[-1]
        best = min(best, (loss, config), key=lambda b: b[0])
        if (i + 1) % 100 == 0:
            print(f"{i + 1} fits, best {best[0]!r}", file=sys.stderr, flush=True)
    return {"optimum": best[0], "config": best[1], "fits": fits, "seed": seed,
            "seconds": time.perf_counter() - started,
            "split_sha256": split_digest(problem.split[:4])}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reference", action="store_true", help="run the long random search")
    p.add_argument("--fits", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if not args.reference:
        p.error("nothing to do: pass --reference")
    json.dump(reference(args.fits, args.seed), sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
