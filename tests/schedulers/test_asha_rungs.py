"""ASHA's rung rule: ``rank`` passes the trials Optuna's successive halving promotes,
``percentile`` is Ray Tune's own ASHA (what runs started before the rule existed keep)."""

from __future__ import annotations

import random
from typing import Any

import optuna
import pytest
from ray.tune.experiment import Trial
from ray.tune.schedulers import TrialScheduler

from raysweep.config.schema import AshaScheduler
from raysweep.schedulers.asha import make_asha

C, S = TrialScheduler.CONTINUE, TrialScheduler.STOP


def asha(rule: str | None, mode: str = "min", max_t: int = 27) -> TrialScheduler:
    config = AshaScheduler(type="asha", max_t=max_t, grace_period=1, reduction_factor=3,
                           rung_rule=rule)  # type: ignore[arg-type]  # fmt: skip
    scheduler = make_asha(config, "training_iteration")
    scheduler.set_search_properties("loss", mode)
    return scheduler


def decide(scheduler: TrialScheduler, trial: Trial, step: int, loss: float) -> str:
    # ASHA never reads the controller
    return str(scheduler.on_trial_result(None, trial, {"training_iteration": step, "loss": loss}))  # type: ignore[arg-type]


def first_reports(scheduler: TrialScheduler, losses: list[float]) -> list[str]:
    """The decision for each new trial's first report, in this order."""
    decisions = []
    for loss in losses:
        trial = Trial("noop", config={}, stub=True)
        scheduler.on_trial_add(None, trial)  # type: ignore[arg-type]
        decisions.append(decide(scheduler, trial, 1, loss))
    return decisions


def first_rung(rule: str | None, losses: list[float], mode: str = "min") -> list[str]:
    return first_reports(asha(rule, mode), losses)


# Checked by hand at reduction factor 3. rank: the best of 1, 2; best 1 of 3..5; best 2
# of 6. percentile: at or above the interpolated 67th percentile of those before it, the
# 3rd (0.42) above 0.5 + 2/3 * (0.4 - 0.5) = 0.433 of the first two.
LOSSES = [0.5, 0.4, 0.42, 0.3, 0.6, 0.35]
RANK = [C, C, S, C, S, C]
PERCENTILE = [C, C, C, C, S, C]


def test_rank_keeps_the_best_third_of_a_rung_the_trial_itself_counted() -> None:
    assert first_rung("rank", LOSSES) == RANK


def test_percentile_and_a_spec_without_the_rule_decide_as_ray_tune_does() -> None:
    assert first_rung("percentile", LOSSES) == first_rung(None, LOSSES) == PERCENTILE


def test_rank_in_max_mode_keeps_the_largest() -> None:
    assert first_rung("rank", [-x for x in LOSSES], mode="max") == RANK


def optuna_decisions(curves: list[list[float]], order: list[int]) -> list[bool]:
    """Optuna's SuccessiveHalvingPruner on the reports in ``order`` (a trial index each)."""
    pruner = optuna.pruners.SuccessiveHalvingPruner(min_resource=1, reduction_factor=3)
    study = optuna.create_study(direction="minimize", pruner=pruner)
    trials = [study.ask() for _ in curves]
    steps, decisions = [0] * len(curves), []
    for i in order:
        steps[i] += 1
        trials[i].report(curves[i][steps[i] - 1], steps[i])
        decisions.append(trials[i].should_prune())
        if decisions[-1]:
            study.tell(trials[i], state=optuna.trial.TrialState.PRUNED)
    return decisions


def ray_decisions(rule: str, curves: list[list[float]], order: list[int]) -> list[bool]:
    scheduler, trials = asha(rule), [Trial("noop", config={}, stub=True) for _ in curves]
    for trial in trials:
        scheduler.on_trial_add(None, trial)  # type: ignore[arg-type]
    steps, decisions = [0] * len(curves), []
    for i in order:
        steps[i] += 1
        decisions.append(decide(scheduler, trials[i], steps[i], curves[i][steps[i] - 1]) == S)
    return decisions


def interleaved(seed: int, n: int = 12, steps: int = 9) -> tuple[list[list[float]], list[int]]:
    """Noisy falling curves and an interleaving of their reports that ends each stopped
    trial (found by running Optuna's pruner on it)."""
    rng = random.Random(seed)
    curves = [[rng.random() / (1 + 0.1 * k) for k in range(steps)] for _ in range(n)]
    order: list[int] = []
    pruner = optuna.pruners.SuccessiveHalvingPruner(min_resource=1, reduction_factor=3)
    study = optuna.create_study(direction="minimize", pruner=pruner)
    trials, done = [study.ask() for _ in curves], [0] * n
    live = list(range(n))
    while live:
        i = rng.choice(live[:4])  # about 4 trials in flight
        order.append(i)
        done[i] += 1
        trials[i].report(curves[i][done[i] - 1], done[i])
        if trials[i].should_prune() or done[i] == steps:
            live.remove(i)
            study.tell(trials[i], state=optuna.trial.TrialState.PRUNED)
    return curves, order


@pytest.mark.parametrize("seed", range(10))
def test_rank_stops_what_optunas_successive_halving_prunes(seed: int) -> None:
    curves, order = interleaved(seed)
    pruned = optuna_decisions(curves, order)
    assert 3 <= sum(pruned) < len(curves)  # it stops some trials, not all
    assert ray_decisions("rank", curves, order) == pruned


def test_percentile_differs_from_optuna_on_the_same_reports() -> None:
    differ = 0
    for seed in range(10):
        curves, order = interleaved(seed)
        differ += ray_decisions("percentile", curves, order) != optuna_decisions(curves, order)
    assert differ >= 5, differ


def rung_state(scheduler: Any) -> list[list[tuple[str, float]]]:
    return [sorted(recorded.items()) for b in scheduler._brackets for _, recorded in b._rungs]


def test_the_rank_rule_survives_a_scheduler_save_and_restore(tmp_path: Any) -> None:
    saved = asha("rank")
    first_trial = Trial("noop", config={}, stub=True)
    saved.on_trial_add(None, first_trial)  # type: ignore[arg-type]
    decide(saved, first_trial, 1, 0.5)
    saved.save(str(tmp_path / "asha.pkl"))
    restored = asha("percentile")
    restored.restore(str(tmp_path / "asha.pkl"))
    assert rung_state(restored) == rung_state(saved)
    assert first_reports(restored, [0.4, 0.42]) == [C, S]  # percentile would continue 0.42
