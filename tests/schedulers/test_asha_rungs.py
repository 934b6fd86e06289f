"""ASHA's rung rule: ``rank`` passes the trials Optuna's successive halving promotes,
``quorum`` the same but none before a rung holds ``rf`` results, ``percentile`` is Ray
Tune's own ASHA (what runs started before the rule existed keep); strict mode compares a
trial only with the trials settled before it started."""

from __future__ import annotations

import random
from typing import Any

import optuna
import pytest
from ray.tune.experiment import Trial
from ray.tune.schedulers import TrialScheduler

from raysweep.config.schema import AshaScheduler
from raysweep.schedulers.asha import make_asha
from raysweep.search.indexed import INDEX_KEY
from raysweep.search.strict_schedule import Settled

C, S = TrialScheduler.CONTINUE, TrialScheduler.STOP


def asha(
    rule: str | None, mode: str = "min", max_t: int = 27, settled: Any = None
) -> TrialScheduler:
    config = AshaScheduler(type="asha", max_t=max_t, grace_period=1, reduction_factor=3,
                           rung_rule=rule)  # type: ignore[arg-type]  # fmt: skip
    scheduler = make_asha(config, "training_iteration", settled)
    scheduler.set_search_properties("loss", mode)
    return scheduler


def decide(scheduler: TrialScheduler, trial: Trial, step: int, loss: float) -> str:
    # ASHA never reads the controller
    return str(scheduler.on_trial_result(None, trial, {"training_iteration": step, "loss": loss}))  # type: ignore[arg-type]


def first_reports(
    scheduler: TrialScheduler, losses: list[float], indices: list[int] | None = None
) -> list[str]:
    """The decision for each new trial's first report, in this order (``indices``: the
    trials' indices, in the same order)."""
    decisions = []
    for k, loss in enumerate(losses):
        config = {} if indices is None else {INDEX_KEY: indices[k]}
        trial = Trial("noop", config=config, stub=True)
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
QUORUM = [S, S, S, C, S, C]  # none of 1, 2; best 1 of 3..5; best 2 of 6
PERCENTILE = [C, C, C, C, S, C]


def test_rank_keeps_the_best_third_of_a_rung_the_trial_itself_counted() -> None:
    assert first_rung("rank", LOSSES) == RANK


def test_quorum_passes_nobody_before_a_rung_holds_rf_results() -> None:
    assert first_rung("quorum", LOSSES) == QUORUM
    assert first_rung("quorum", [-x for x in LOSSES], mode="max") == QUORUM


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


@pytest.mark.parametrize("rule", ["rank", "quorum", "percentile"])
def test_strict_mode_compares_a_trial_with_the_settled_trials_only(rule: str) -> None:
    """Window 2: trial i is compared with trials <= i - 2, whatever arrived before it."""
    losses, indices = [0.5, 0.4, 0.42, 0.3, 0.6, 0.35], [0, 1, 2, 3, 4, 5]
    in_order = first_reports(asha(rule, settled=Settled("window", 2)), losses, indices)
    # the same reports arriving in another order (trial 1 before trial 0, 3 before 2)
    order = [1, 0, 3, 2, 5, 4]
    shuffled = first_reports(
        asha(rule, settled=Settled("window", 2)),
        [losses[i] for i in order],
        [indices[i] for i in order],
    )
    assert [shuffled[order.index(i)] for i in indices] == in_order
    # trial 3 (0.3) is compared with trials 0 and 1 alone: 0.42 (trial 2) does not count
    expected = {"rank": C, "quorum": C, "percentile": C}[rule]
    assert in_order[3] == expected


def test_strict_quorum_decides_from_the_settled_trials_as_if_they_were_alone() -> None:
    """Trial i's decision equals the plain rule's over trials 0..i-window and i itself."""
    rng = random.Random(7)
    losses = [rng.random() for _ in range(12)]
    strict = first_reports(asha("quorum", settled=Settled("window", 3)), losses, list(range(12)))
    for i, got in enumerate(strict):
        alone = first_rung("quorum", [*losses[: max(0, i - 2)], losses[i]])[-1]
        assert got == alone, i


def test_settled_trials_for_each_schedule() -> None:
    window, batch = Settled("window", 4), Settled("batch", 4)
    assert [window(i) for i in (0, 3, 4, 9)] == [0, 0, 1, 6]
    assert [batch(i) for i in (0, 3, 4, 9)] == [0, 0, 4, 8]
