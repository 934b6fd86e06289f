"""The lgbm problem of the search-quality benchmark is the built-in trainable's function.

The peers evaluate it through benchmarks/workloads/search_quality_lgbm.py (plain
LightGBM and scikit-learn); raysweep's recipes through the built-in ``lightgbm``
trainable. Both must give the same val_loss, bit for bit, at every report.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from benchmarks.workloads.search_quality_lgbm import (
    PARAMS,
    REFERENCE_CONFIG,
    REFERENCE_FITS,
    REFERENCE_OPTIMUM,
    REFERENCE_SEED,
    REPORTS,
    LGBMProblem,
    random_configs,
)
from benchmarks.workloads.search_quality_problems import PROBLEMS
from benchmarks.workloads.search_quality_recipes import RECIPES, runs_on

from conftest import record_builtin_fit
from factories import ctx_for
from raysweep.config.load import parse_spec
from raysweep.trainables.gbm import fit_gbm

CONFIGS = [
    *random_configs(2, seed=3),
    # the corners: the most and the fewest trees' worth of fitting
    dict(learning_rate=0.3, num_leaves=128, min_data_in_leaf=2, lambda_l1=1e-3, lambda_l2=1e-3),
    dict(learning_rate=0.005, num_leaves=4, min_data_in_leaf=64, lambda_l1=10.0, lambda_l2=10.0),
]


def trainable_losses(tmp_path: Path, config: dict[str, Any], seed: int) -> list[float]:
    """val_loss at every report of the built-in trainable, as the benchmark's sweeps run it."""
    args = PROBLEMS["lgbm"].sweep_fields()["trainable_args"]  # type: ignore[attr-defined]

    def fit(config: dict[str, Any], ctx: Any, dataset: Any, report: Any, ckpt: Any) -> None:
        fit_gbm("lightgbm", config, ctx, dataset, report, ckpt)

    recorder = record_builtin_fit(fit, ctx_for, tmp_path, config, args, seed=seed, cpus=1,
                                  deterministic=True)  # fmt: skip
    assert [m["rounds"] for m in recorder.metrics] == [10 * (i + 1) for i in range(REPORTS)]
    return [m["val_loss"] for m in recorder.metrics]


@pytest.mark.parametrize("index", range(len(CONFIGS)))
def test_the_objective_is_the_builtin_trainables_val_loss_bit_for_bit(
    tmp_path: Path, index: int
) -> None:
    config = CONFIGS[index]
    ours = trainable_losses(tmp_path, config, seed=7)
    problem = LGBMProblem()
    assert problem.fit(config, seed=7) == ours  # exact float equality at all 27 reports
    assert problem.regret(config) == ours[-1] - REFERENCE_OPTIMUM
    fresh = LGBMProblem()  # report by report, as the peers ask: shorter fits, the same values
    assert [fresh.value(config, z) for z in range(1, REPORTS + 1)] == ours


def test_the_trial_seed_changes_nothing_so_the_value_is_a_function_of_the_config(
    tmp_path: Path,
) -> None:
    config = CONFIGS[0]
    assert trainable_losses(tmp_path, config, seed=7) == trainable_losses(tmp_path, config, 99)
    assert LGBMProblem().fit(config, seed=123456) == LGBMProblem().fit(config, seed=1)


def test_the_reference_optimum_is_a_config_of_the_recorded_random_search() -> None:
    assert REFERENCE_CONFIG in random_configs(REFERENCE_FITS, REFERENCE_SEED)
    assert LGBMProblem().regret(REFERENCE_CONFIG) == 0.0


def test_every_lgbm_recipe_sweeps_the_problems_space_with_the_builtin_trainable() -> None:
    problem = PROBLEMS["lgbm"]
    for name, recipe in RECIPES.items():
        if not runs_on(name, "lgbm"):
            continue
        spec = parse_spec(recipe(problem, 1, 10))
        assert spec.trainable == "lightgbm", name
        assert sorted(spec.space) == sorted(p.name for p in PARAMS), name


def test_a_peer_on_lgbm_spends_its_budget_and_scores_only_new_incumbents() -> None:
    from benchmarks.workloads.search_quality_peers import run as run_peer

    runs = run_peer("lgbm", "optuna-tpe-sha", seed=1, budget=30, workers=2)["observations"]
    assert [r[0] for r in runs] == list(range(1, 31))
    best, top, best_at_top = float("inf"), 0.0, float("inf")
    for _used, _wall, value, regret, fidelity in runs:
        # a new incumbent at any fidelity, or at the highest fidelity reached (what is
        # returned): its full-fidelity regret, computed
        returned = fidelity > top or (fidelity == top and value < best_at_top)
        if value < best or returned:
            assert -0.05 < regret < 1.0
        else:  # the curves never read it, and a full fit would cost the peers' wall time
            assert regret == float("inf")
        best = min(best, value)
        if returned:
            top, best_at_top = fidelity, value
