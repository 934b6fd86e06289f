"""The O(1) next-trial choice picks exactly what Ray Tune's FIFOScheduler picks."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from ray.tune.experiment import Trial
from ray.tune.schedulers import FIFOScheduler

from raysweep.schedulers.fifo import SweepFIFOScheduler

STATUSES = (Trial.PENDING, Trial.RUNNING, Trial.PAUSED, Trial.TERMINATED, Trial.ERROR)


class TrialList:
    """What a scheduler sees of the controller: its list of trials."""

    def __init__(self) -> None:
        self.trials: list[Trial] = []

    def get_trials(self) -> list[Trial]:
        return self.trials


def new_trial(status: str) -> Trial:
    trial = Trial("noop", config={}, stub=True)
    trial.set_status(status)
    return trial


def test_same_choice_as_ray_fifo_while_trials_come_and_go() -> None:
    rng = random.Random(7)
    controller = TrialList()
    ours, ray_fifo = SweepFIFOScheduler(), FIFOScheduler()
    for _ in range(3000):
        if rng.random() < 0.3:
            controller.trials.append(new_trial(Trial.PENDING))
        if controller.trials:
            # Mostly the oldest unfinished trials move on, as in a real sweep.
            live = [t for t in controller.trials if t.status != Trial.TERMINATED]
            if live:
                trial = live[min(int(rng.expovariate(0.5)), len(live) - 1)]
                trial.set_status(rng.choice(STATUSES))
        assert ours.choose_trial_to_run(controller) is ray_fifo.choose_trial_to_run(controller)


def test_scan_skips_the_finished_prefix() -> None:
    controller = TrialList()
    controller.trials = [new_trial(Trial.TERMINATED) for _ in range(1000)]
    controller.trials += [new_trial(Trial.RUNNING), new_trial(Trial.PAUSED)]
    controller.trials.append(new_trial(Trial.PENDING))
    scheduler = SweepFIFOScheduler()
    assert scheduler.choose_trial_to_run(controller) is controller.trials[-1]
    assert scheduler._cursor == 1000
    controller.trials[-1].set_status(Trial.RUNNING)
    assert scheduler.choose_trial_to_run(controller) is controller.trials[1001]  # the paused one


class CountingList(list[Trial]):
    """A trial list that counts the items read and refuses to be walked from the top."""

    reads = 0

    def __getitem__(self, index: Any) -> Any:
        self.reads += 1
        return super().__getitem__(index)

    def __iter__(self) -> Iterator[Trial]:
        raise AssertionError("the whole trial list was walked")


def test_a_choice_reads_only_the_trials_past_the_finished_prefix() -> None:
    controller = TrialList()
    trials = CountingList(new_trial(Trial.TERMINATED) for _ in range(5000))
    trials += [new_trial(Trial.RUNNING), new_trial(Trial.RUNNING)]
    controller.trials = trials
    scheduler = SweepFIFOScheduler()
    assert scheduler.choose_trial_to_run(controller) is None  # the first call finds the prefix
    trials.reads = 0
    assert scheduler.choose_trial_to_run(controller) is None
    assert trials.reads <= 3, trials.reads


def test_a_new_trial_list_starts_from_the_top() -> None:
    scheduler = SweepFIFOScheduler()
    first = TrialList()
    first.trials = [new_trial(Trial.TERMINATED), new_trial(Trial.TERMINATED)]
    assert scheduler.choose_trial_to_run(first) is None
    restored = TrialList()
    restored.trials = [new_trial(Trial.PENDING), new_trial(Trial.TERMINATED)]
    assert scheduler.choose_trial_to_run(restored) is restored.trials[0]
