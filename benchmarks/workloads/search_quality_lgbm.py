"""The users' own workload in the search-quality benchmark: LightGBM, boosting rounds as fidelity.

raysweep's built-in ``lightgbm`` trainable on scikit-learn's bundled breast-cancer set,
scored on held-out rows (search_quality_holdout.py: 30% of the rows never reach the
optimizers; the pool's 25% validation rows give the value they see). ``REPORTS``
reports of ``ROUNDS_PER_REPORT`` boosting rounds; fidelity ``z`` is the number of
reports, the value at ``z`` the validation log loss after ``z * ROUNDS_PER_REPORT``
rounds. The peers (another virtual environment, no raysweep there) evaluate the same
function through this module, written with plain LightGBM and scikit-learn as the
built-in trainable trains: the same split (checked against ``SPLIT_SHA256``), the same
parameters (``seed``, ``num_threads=1``, ``deterministic``, ``force_row_wise``,
``objective=binary``, ``metric=None``), the same log loss at the same rounds.
tests/benchmarks/test_search_quality_lgbm.py checks it is bit for bit the trainable's
``val_loss``.

The space has no row or column sampling (``feature_fraction``, bagging, GOSS): those
draw from the trial's seed, which raysweep derives from the trial index, so a
configuration's value would depend on when it ran. Without them LightGBM is
deterministic and the seed changes nothing, so the value is a function of the
configuration alone, as for Hartmann.

Regret: the configuration's test log loss after every report minus ``REFERENCE``'s, the
best test loss of a long random search (search_quality_references.json: its command,
seed and date); an optimizer may beat it: its regret is then negative.
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

ROUNDS_PER_REPORT = 10
REPORTS = 27
# The names are LightGBM's canonical ones: sweep.json's alias hook would rename
# ``min_child_samples`` to ``min_data_in_leaf`` in the configs raysweep records.
PARAMS = (
    Param("learning_rate", 0.005, 0.3, log=True),
    Param("num_leaves", 4, 128, log=True, integer=True),
    Param("min_data_in_leaf", 2, 64, log=True, integer=True),
    Param("lambda_l1", 1e-3, 10.0, log=True),
    Param("lambda_l2", 1e-3, 10.0, log=True),
)
SPLIT_SHA256 = "3a5b435ad15f7e7f8befd59c6a3ae6d2337649cc7c7e38bf012fd65a1f638f57"
# the best held-out score of a random search, recorded with its command, seed and date
REFERENCE = Reference.of("lgbm")


def lightgbm_params(config: Mapping[str, Any], seed: int = 0) -> dict[str, Any]:
    """The parameters raysweep's built-in trainable passes for ``config`` on one CPU."""
    owned = {"seed": seed, "num_threads": 1, "verbosity": -1, "deterministic": True,
             "device_type": "cpu", "force_row_wise": True}  # fmt: skip
    user = {p.name: p.cast(config[p.name]) for p in PARAMS}
    return {**owned, "objective": "binary", **user, **owned, "metric": "None"}


def fit_lightgbm(s: Split, config: Mapping[str, Any], reports: int,
                 seed: int = 0) -> tuple[list[float], float]:  # fmt: skip
    """A fit of ``reports`` reports' rounds as the built-in trainable runs it: the
    validation loss at every report and the test loss at the end."""
    import lightgbm as lgb

    losses: list[float] = []
    evaluated = 0

    def feval(preds: Any, _: Any) -> list[tuple[str, float, bool]]:
        nonlocal evaluated
        evaluated += 1
        if evaluated % ROUNDS_PER_REPORT:
            return []
        losses.append(log_loss(s.y_val, preds))
        return [("val_loss", losses[-1], False)]

    train_set = lgb.Dataset(s.X_train, s.y_train, feature_name=s.names)
    val_set = lgb.Dataset(s.X_val, s.y_val, reference=train_set)
    booster = lgb.train(lightgbm_params(config, seed), train_set,
                        num_boost_round=reports * ROUNDS_PER_REPORT, valid_sets=[val_set],
                        valid_names=["val"], feval=feval, keep_training_booster=True)  # fmt: skip
    return losses, log_loss(s.y_test, booster.predict(s.X_test))


def lgbm_problem() -> HeldOutProblem:
    """The problem ``lgbm``."""
    return HeldOutProblem("lgbm", "lightgbm", "breast_cancer", PARAMS, REPORTS,
                          ROUNDS_PER_REPORT, SPLIT_SHA256, REFERENCE, fit_lightgbm)  # fmt: skip


if __name__ == "__main__":
    sys.exit(reference_main(lgbm_problem(), sys.argv[1:], __doc__))
