"""Ray Tune's schedulers driven for local trials through the one decider (no None controller)."""

from __future__ import annotations

import threading

from ray.tune.schedulers import AsyncHyperBandScheduler, MedianStoppingRule

from raysweep.engines.local.backend import ThreadBackend
from raysweep.engines.local.trial import LocalTrial
from raysweep.report.collect import collect
from raysweep.schedulers.decider import ControllerStandIn, Decider


def trial(trial_id: str, index: int) -> LocalTrial:
    return LocalTrial(trial_id, {"x": index, "__trial_index__": index})


def test_rays_own_median_rule_asks_the_stand_in_for_live_trials() -> None:
    """Ray's MedianStoppingRule (not raysweep's subclass) calls get_live_trials on
    its controller when too few trials can be compared: a None controller crashed."""
    trials = [trial("a", 0), trial("b", 1)]
    asked: list[int] = []

    def live() -> list[LocalTrial]:
        asked.append(1)
        return trials

    rule = MedianStoppingRule(time_attr="training_iteration", metric="loss", mode="min",
                              grace_period=1, min_samples_required=3)  # fmt: skip
    decider = Decider(rule, ControllerStandIn(live, lambda t: t.live), "training_iteration")
    for t in trials:
        decider.added(t)
    assert not decider.result(trials[0], {"training_iteration": 2, "loss": 1.0})
    assert asked, "the rule never asked its controller"


def test_the_stand_in_lists_only_trials_that_have_not_ended() -> None:
    trials = [trial("a", 0), trial("b", 1)]
    trials[0].finish("stopped", 1.0)
    assert ControllerStandIn(lambda: trials, lambda t: t.live).get_live_trials() == [trials[1]]


def test_asha_stops_a_worse_trial_at_its_rung_through_the_adapter() -> None:
    asha = AsyncHyperBandScheduler(time_attr="training_iteration", metric="loss", mode="min",
                                   max_t=4, grace_period=1, reduction_factor=2)  # fmt: skip
    good, bad = trial("a", 0), trial("b", 1)
    stand_in = ControllerStandIn(lambda: [good, bad], lambda t: t.live)
    decider = Decider(asha, stand_in, "training_iteration")
    decider.added(good)
    decider.added(bad)
    assert not decider.result(good, {"training_iteration": 1, "loss": 0.1})
    assert decider.result(bad, {"training_iteration": 1, "loss": 0.9})


def test_collect_takes_the_outcome_the_engine_recorded() -> None:
    """No trial_info 'returned' record and no Ray status: the outcome alone decides."""
    done, stopped, failed, waiting = (trial(i, n) for n, i in enumerate("abcd"))
    for t, outcome in ((done, "completed"), (stopped, "stopped"), (failed, "errored")):
        t.add_row({"training_iteration": 1, "loss": 0.5})
        t.finish(outcome, 1.0)
    trials = [t.view() for t in (done, stopped, failed, waiting)]
    result = collect(trials, "n", "loss", "min", master_seed=1)
    assert [r.status for r in result.trials] == ["completed", "stopped", "errored", "pending"]
    assert result.trials[2].error == "trial failed (no error text was kept)"
    assert result.trials[0].error is None


def test_the_backend_runs_trials_in_its_slots_and_hands_back_the_ended_ones() -> None:
    release = threading.Event()
    ran: list[str] = []

    def work(t: LocalTrial) -> None:
        release.wait(5)
        ran.append(t.trial_id)

    trials = [trial("a", 0), trial("b", 1)]
    with ThreadBackend(2, work) as backend:
        for t in trials:
            backend.start_trial(t)
        assert backend.free == 0 and backend.busy
        assert backend.wait_ended(0.01) == []  # both still running
        release.set()
        ended: list[LocalTrial] = []
        while backend.busy:
            ended += backend.wait_ended(1.0)
    assert sorted(t.trial_id for t in ended) == ["a", "b"] == sorted(ran)
    assert backend.free == 2
