"""The held-out GBM problems of the search-quality benchmark (``lgbm``, ``xgb``).

The peers evaluate them through benchmarks/workloads/search_quality_lgbm.py and _xgb.py
(plain LightGBM, XGBoost and scikit-learn); raysweep's recipes through the built-in
trainables on the selection pool's file. Both must give the same val_loss, bit for bit,
at every report, and the test rows that score the regret must never reach the trainable.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from benchmarks.workloads.search_quality_holdout import HeldOutProblem, split_sha256
from benchmarks.workloads.search_quality_problems import PROBLEMS
from benchmarks.workloads.search_quality_recipes import RECIPES, runs_on
from benchmarks.workloads.search_quality_space import random_configs

from conftest import record_builtin_fit
from factories import ctx_for
from raysweep.config.load import parse_spec
from raysweep.trainables.data import load_dataset
from raysweep.trainables.gbm import fit_gbm

NAMES = ("lgbm", "xgb")


def problem(name: str) -> HeldOutProblem:
    found = PROBLEMS[name]
    assert isinstance(found, HeldOutProblem)
    return found


def corners(p: HeldOutProblem) -> list[dict[str, Any]]:
    """A random configuration and the space's two corners (the most and fewest trees' work)."""
    high = {q.name: q.cast(q.high) for q in p.params}
    low = {q.name: q.cast(q.low) for q in p.params}
    return [random_configs(p.params, 1, seed=3)[0], high, low]


def trainable_losses(tmp_path: Path, p: HeldOutProblem, config: dict[str, Any],
                     seed: int) -> list[float]:  # fmt: skip
    """val_loss at every report of the built-in trainable, as the benchmark's sweeps run it."""
    args = p.sweep_fields()["trainable_args"]

    def fit(config: dict[str, Any], ctx: Any, dataset: Any, report: Any, ckpt: Any) -> None:
        fit_gbm(p.library, config, ctx, dataset, report, ckpt)

    recorder = record_builtin_fit(fit, ctx_for, tmp_path, config, args, seed=seed, cpus=1,
                                  deterministic=True)  # fmt: skip
    rounds = p.rounds_per_report
    assert [m["rounds"] for m in recorder.metrics] == [rounds * (i + 1) for i in range(p.reports)]
    return [m["val_loss"] for m in recorder.metrics]


@pytest.mark.parametrize("name", NAMES)
def test_the_objective_is_the_builtin_trainables_val_loss_bit_for_bit(
    tmp_path: Path, name: str
) -> None:
    p = problem(name)
    for config in corners(p)[:2]:
        ours = trainable_losses(tmp_path, p, config, seed=7)
        losses, test = p.train(config, p.reports, seed=7)
        assert losses == ours  # exact float equality at every report
        assert p.regret(config) == test - p.reference
        fresh = p.fresh()  # report by report, as the peers ask: shorter fits, the same values
        assert [fresh.value(config, z) for z in range(1, p.reports + 1)] == ours
    # the trial's seed changes nothing: the value is a function of the configuration
    assert trainable_losses(tmp_path, p, corners(p)[0], 99) == p.train(corners(p)[0], p.reports)[0]


@pytest.mark.parametrize("name", NAMES)
def test_the_test_rows_never_reach_the_trainable(name: str) -> None:
    """The trainable reads the selection pool's file: its train and validation rows are
    the pool, split as the peers split it, and no test row is among them."""
    p = problem(name)
    dataset = load_dataset(p.sweep_fields()["trainable_args"], 0)
    s = p.split
    for ours, theirs in ((s.X_train, dataset.X_train), (s.X_val, dataset.X_val),
                         (s.y_train, dataset.y_train), (s.y_val, dataset.y_val)):  # fmt: skip
        assert np.array_equal(ours, theirs)
    seen = {row.tobytes() for row in np.vstack([dataset.X_train, dataset.X_val])}
    held = [row.tobytes() for row in s.X_test]
    assert len(held) > 0.2 * (len(seen) + len(held))
    assert not seen.intersection(held)
    # the bundled set, whole: pool and test, nothing lost, nothing twice
    everything = {row.tobytes() for row in np.vstack([dataset.X_train, dataset.X_val, s.X_test])}
    assert len(everything) == len(seen) + len(set(held))
    assert split_sha256([s.X_train, s.X_val, s.y_train, s.y_val, s.X_test, s.y_test]) == p.sha256


@pytest.mark.parametrize("name", NAMES)
def test_the_reference_optimum_is_a_config_of_the_recorded_random_search(name: str) -> None:
    import importlib

    reference = importlib.import_module(f"benchmarks.workloads.search_quality_{name}").REFERENCE
    p = problem(name)
    if not reference.date:
        pytest.skip(f"{name}: no reference recorded yet")
    assert reference.config in random_configs(p.params, reference.fits, reference.seed)
    assert p.fresh().regret(reference.config) == 0.0
    assert f"--fits {reference.fits} --seed {reference.seed}" in reference.command


@pytest.mark.parametrize("name", NAMES)
def test_every_recipe_sweeps_the_problems_space_with_the_builtin_trainable(name: str) -> None:
    p = problem(name)
    for recipe, make in RECIPES.items():
        if not runs_on(recipe, name):
            continue
        config = make(p, 1, 10)
        assert Path(config["trainable_args"]["dataset"]).is_file(), recipe
        try:
            spec = parse_spec(config)
        except Exception as e:  # strict mode refuses ASHA today
            assert "strict mode" in str(e), recipe
            continue
        assert spec.trainable == p.library, recipe
        assert sorted(spec.space) == sorted(q.name for q in p.params), recipe


def test_a_peer_on_lgbm_spends_its_budget_and_scores_only_new_incumbents() -> None:
    from benchmarks.workloads.search_quality_peers import run as run_peer

    runs = run_peer("lgbm", "optuna-tpe-sha", seed=1, budget=30, workers=2)["observations"]
    assert [r[0] for r in runs] == list(range(1, 31))
    best = float("inf")
    for _used, _wall, value, regret, _fidelity, _own in runs:
        if value < best:  # a new best value at any fidelity: its held-out regret, computed
            assert -0.05 < regret < 1.0
        else:  # the fallback never reads it, and a full fit would cost the peers' wall time
            assert regret == float("inf")
        best = min(best, value)
