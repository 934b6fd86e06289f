"""Hyperband's history replayed on resume: paused trials wait, and the bracket halves as before.

Ray Tune's own scheduler and Trial objects; the controller Hyperband talks to is
raysweep's one stand-in (``schedulers.decider.ControllerStandIn``), stopping a trial as
Ray's does.
Brackets of max_t 9, eta 3: trials 0-2 run straight to 9, trials 3-7 are halved
at 3 (2 of 5 kept), trial 8 starts the next bracket.
"""

from __future__ import annotations

from typing import Any

from ray.tune.experiment import Trial
from ray.tune.schedulers import TrialScheduler

from raysweep._raycompat.paused_trials import released
from raysweep.config.schema import HyperbandScheduler as HyperbandConfig
from raysweep.schedulers.hyperband import make_hyperband
from raysweep.schedulers.hyperband_replay import hyperband_decider, replay_hyperband

LOSS_AT_3 = {3: 5.0, 4: 1.0, 5: 4.0, 6: 2.0, 7: 3.0}  # trials 4 and 6 are the best two


def rows(trial: int, upto: int) -> list[dict[str, Any]]:
    end = LOSS_AT_3.get(trial, 1.0)
    return [{"training_iteration": i, "loss": end + (3 - i)} for i in range(1, upto + 1)]


def killed_experiment() -> tuple[TrialScheduler, list[Trial], dict[str, list[dict[str, Any]]]]:
    """Trials 0-2 finished; 3-6 reached the rung at 3 and wait; 7 was killed at 2; 8 never ran."""
    scheduler = make_hyperband(HyperbandConfig(type="hyperband", max_t=9, reduction_factor=3),
                               "training_iteration")  # fmt: skip
    scheduler.set_search_properties("loss", "min")
    trials = [Trial("fit", config={}, stub=True) for _ in range(9)]
    history: dict[str, list[dict[str, Any]]] = {}
    for index, trial in enumerate(trials):
        finished = index < 3
        upto = 9 if finished else 3 if index < 7 else 2 if index == 7 else 0
        trial.status = Trial.TERMINATED if finished else Trial.PENDING  # as Ray restores them
        history[trial.trial_id] = rows(index, upto)
    return scheduler, trials, history


def test_the_trials_waiting_at_their_rung_are_returned_and_statuses_put_back() -> None:
    scheduler, trials, history = killed_experiment()
    replayed = replay_hyperband(scheduler, trials, history, lambda row: False)
    assert replayed.waiting == trials[3:7] and replayed.stopped == []
    assert [t.status for t in trials] == [Trial.TERMINATED] * 3 + [Trial.PENDING] * 6
    assert not any(released(scheduler, t) for t in trials[3:])


def test_the_bracket_halves_as_the_uninterrupted_one_when_the_last_trial_arrives() -> None:
    scheduler, trials, history = killed_experiment()
    for trial in replay_hyperband(scheduler, trials, history, lambda row: False).waiting:
        trial.status = Trial.PAUSED  # what the driver does in Ray's controller
    controller: Any = hyperband_decider(scheduler, trials).controller
    trials[7].status = Trial.RUNNING
    decision = scheduler.on_trial_result(controller, trials[7], rows(7, 3)[-1])
    assert decision == TrialScheduler.STOP  # 3.0 is third best: halved away
    assert [t.status for t in trials[3:7]] == [
        Trial.TERMINATED,  # 5.0
        Trial.PAUSED,  # 1.0: released
        Trial.TERMINATED,  # 4.0
        Trial.PAUSED,  # 2.0: released
    ]
    assert released(scheduler, trials[4]) and released(scheduler, trials[6])


def test_rows_past_the_stop_rule_are_not_given() -> None:
    scheduler, trials, history = killed_experiment()
    replayed = replay_hyperband(
        scheduler, trials, history, lambda row: row["training_iteration"] >= 3
    )
    assert replayed.waiting == []  # no trial reached its rung as far as Hyperband knows


def test_a_trial_killed_after_the_report_that_halved_its_bracket_is_returned_stopped() -> None:
    """Trial 7 reached the rung (its 3rd row, its checkpoint) and was killed before Ray's
    snapshot said it stopped: the replay halves the bracket as the live run did, and
    hands back the trials it stopped that Ray's restore would run again."""
    scheduler, trials, history = killed_experiment()
    history[trials[7].trial_id] = rows(7, 3)
    replayed = replay_hyperband(scheduler, trials, history, lambda row: False)
    stopped = {t.trial_id: row["training_iteration"] for t, row in replayed.stopped}
    # 5.0, 4.0 and 3.0 are halved away at the rung; 1.0 and 2.0 go on
    assert stopped == {trials[i].trial_id: 3 for i in (3, 5, 7)}
    assert replayed.waiting == []  # the survivors are released, not waiting
    assert [t.status for t in trials[3:]] == [Trial.PENDING] * 6  # statuses put back
