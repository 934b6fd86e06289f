"""The median rule never pauses a trial to give its slot away; it still stops bad trials."""

from __future__ import annotations

from ray.tune.experiment import Trial
from ray.tune.schedulers import MedianStoppingRule, TrialScheduler

from raysweep.config.schema import MedianScheduler
from raysweep.schedulers.median import make_median


class Controller:
    """What the rule sees of the controller: its live trials."""

    def __init__(self, trials: list[Trial]) -> None:
        self.trials = trials

    def get_live_trials(self) -> list[Trial]:
        return [t for t in self.trials if not t.is_finished()]


def new_trial(status: str) -> Trial:
    trial = Trial("noop", config={}, stub=True)
    trial.set_status(status)
    return trial


def result(step: int, loss: float) -> dict[str, float]:
    return {"training_iteration": step, "loss": loss, "time_total_s": float(step)}


def rules() -> tuple[TrialScheduler, TrialScheduler]:
    config = MedianScheduler(type="median", grace_period=1, min_samples_required=3)
    ours = make_median(config, "training_iteration")
    ray_rule = MedianStoppingRule(time_attr="training_iteration", grace_period=1)
    for rule in (ours, ray_rule):
        rule.set_search_properties("loss", "min")
    return ours, ray_rule


def test_a_trial_keeps_its_slot_while_too_few_trials_can_be_compared() -> None:
    running, waiting = new_trial(Trial.RUNNING), new_trial(Trial.PENDING)
    controller = Controller([running, waiting])
    ours, ray_rule = rules()
    for rule in (ours, ray_rule):
        rule.on_trial_add(controller, running)
    assert ray_rule.on_trial_result(controller, running, result(1, 1.0)) == TrialScheduler.PAUSE
    assert ours.on_trial_result(controller, running, result(1, 1.0)) == TrialScheduler.CONTINUE


def test_a_trial_worse_than_the_median_is_still_stopped() -> None:
    trials = [new_trial(Trial.RUNNING) for _ in range(4)]
    controller = Controller(trials)
    ours, _ = rules()
    for trial in trials:
        ours.on_trial_add(controller, trial)
    for step in (1, 2):
        for trial, loss in zip(trials[:3], (0.1, 0.2, 0.3), strict=True):
            ours.on_trial_result(controller, trial, result(step, loss))
    assert ours.on_trial_result(controller, trials[3], result(2, 5.0)) == TrialScheduler.STOP
