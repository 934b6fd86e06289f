"""Parameter importance: Optuna's evaluators, named, deterministic, ranked in report.txt."""

from __future__ import annotations

import random

import optuna
from optuna.distributions import CategoricalDistribution, FloatDistribution

from raysweep.report.importance import (
    FANOVA_MAX_TRIALS,
    FANOVA_TREES,
    compute_importance,
    format_importance,
)


def _study(n: int) -> optuna.Study:
    rng = random.Random(0)
    dists = {"lr": FloatDistribution(1e-3, 1, log=True), "noise": FloatDistribution(0, 1),
             "kind": CategoricalDistribution(["a", "b"])}  # fmt: skip
    trials = []
    for _ in range(n):
        params = {"lr": 10 ** rng.uniform(-3, 0), "noise": rng.random(), "kind": rng.choice("ab")}
        value = (params["lr"] - 0.1) ** 2 * 100 + 0.001 * params["noise"]
        trials.append(optuna.trial.create_trial(value=value, params=params, distributions=dists))
    study = optuna.create_study()
    study.add_trials(trials)
    return study


def test_fanova_for_small_sweeps_finds_the_parameter_that_matters() -> None:
    importance = compute_importance(_study(40))
    assert importance is not None
    assert importance.evaluator.startswith("fANOVA (optuna.importance.FanovaImportanceEvaluator")
    assert f"{FANOVA_TREES} trees" in importance.evaluator  # named as computed
    assert importance.trials == 40
    assert next(iter(importance.values)) == "lr"  # most important first
    assert abs(sum(importance.values.values()) - 1) < 1e-6
    assert compute_importance(_study(40)) == importance  # seeded: the same every time


def test_ped_anova_above_the_fanova_limit() -> None:
    importance = compute_importance(_study(FANOVA_MAX_TRIALS + 50))
    assert importance is not None and importance.evaluator.startswith("PED-ANOVA")
    assert next(iter(importance.values)) == "lr"


def test_too_few_trials_give_no_importance_and_say_so() -> None:
    assert compute_importance(None) is None
    assert compute_importance(_study(1)) is None
    assert "not computed" in format_importance(None)


def test_report_txt_ranking() -> None:
    text = format_importance(compute_importance(_study(30)))
    lines = text.splitlines()
    assert lines[0].startswith("Parameter importance (fANOVA") and "30 trials" in lines[0]
    assert lines[1].split()[:2] == ["1.", "lr"]
    assert len(lines) == 4
