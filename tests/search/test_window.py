"""WindowSearcher: trial i waits only for trial i - window; results told in index order.

Real Optuna / variant searchers through the chain Ray sees (``build_searcher``),
driven by simulated schedules on a simulated clock (no Ray cluster, no timing).
"""

from __future__ import annotations

import heapq
import random
from typing import Any

import pytest
from ray.tune.search import Searcher

from raysweep.config.schema import SweepSpec
from raysweep.search.build import build_searcher, innermost
from raysweep.search.window import WindowSearcher
from strict_searchers import Recorder, objective, spec_for


def test_window_protocol_waits_for_trial_i_minus_window_and_tells_in_index_order() -> None:
    inner = Recorder()
    window = WindowSearcher(inner, window=2, total=5)
    assert [window.suggest(t) for t in ("a", "b")] == [{"n": 0}, {"n": 1}]
    assert window.suggest("c") is None  # trial 0 still runs
    window.on_trial_result("b", {"loss": 7.0})  # held back, as is b's end
    window.on_trial_complete("b", {"loss": 1.0})
    assert window.suggest("c") is None  # b finished first: still waiting for trial 0
    assert [e[0] for e in inner.events] == ["suggest", "suggest"]
    window.on_trial_result("a", {"loss": 9.0})
    window.on_trial_complete("a", {"loss": 0.0})
    assert window.suggest("c") == {"n": 2}
    assert inner.events[2:] == [
        ("result", "window-0", 9.0),
        ("complete", "window-0", 0.0),
        ("suggest", "window-2", None),  # trial 1 pending, though it has finished
    ]
    assert window.suggest("d") == {"n": 3}
    assert inner.events[5:] == [
        ("result", "window-1", 7.0),
        ("complete", "window-1", 1.0),
        ("suggest", "window-3", None),
    ]
    assert window.suggest("e") is None  # trial 2 (c) runs
    window.on_trial_complete("c", None, error=True)
    window.on_trial_complete("unknown", {"loss": 5.0})  # not ours: ignored
    assert window.suggest("e") == {"n": 4}
    assert inner.events[8:] == [("complete", "window-2", None), ("suggest", "window-4", None)]
    assert window.suggest("f") is None  # all drawn; d and e still run
    window.on_trial_complete("e", {"loss": 4.0})
    window.on_trial_complete("d", {"loss": 3.0})  # the last end: the rest told, in order
    assert inner.events[10:] == [("complete", "window-3", 3.0), ("complete", "window-4", 4.0)]
    assert window.suggest("f") == Searcher.FINISHED
    assert inner.count == 5


def test_invalid_arguments_name_the_value() -> None:
    with pytest.raises(ValueError, match=r"window must be >= 1 \(got 0\)"):
        WindowSearcher(Recorder(), window=0)
    with pytest.raises(ValueError, match=r"total must be >= 0 \(got -1\)"):
        WindowSearcher(Recorder(), window=1, total=-1)


def known_at_each_suggestion(spec: SweepSpec, slots: int, order: random.Random) -> list[Any]:
    """(finished, running) trials of the Optuna study when each trial is suggested."""
    searcher = build_searcher(spec)
    study = innermost(searcher)._ot_study
    seen: list[tuple[int, int]] = []
    live: list[tuple[str, dict[str, Any]]] = []
    while len(seen) < spec.total_trials or live:
        while len(live) < slots and len(seen) < spec.total_trials:
            config = searcher.suggest(f"t{len(seen)}")
            if not isinstance(config, dict):
                break
            states = [t.state.name for t in study.trials[:-1]]  # those before this one
            seen.append((states.count("COMPLETE"), states.count("RUNNING")))
            live.append((f"t{len(seen) - 1}", config))
        trial_id, config = live.pop(order.randrange(len(live)))
        searcher.on_trial_complete(trial_id, {"loss": objective(config)})
    return seen


def test_each_suggestion_knows_all_but_the_last_window_minus_one_trials() -> None:
    """Whatever the slots and finish order: trial i knows trials 0..i-W, W-1 pending.

    (Batches of 4 tell TPE the results 4 at a time: trial 4k+j is asked knowing
    trials 0..4k-1, with j pending; at least as much as a window of 4 tells it.)
    """
    spec = spec_for("optuna", batch_size=4, num_samples=12, schedule="window")
    expected = [(max(0, i - 3), min(i, 3)) for i in range(12)]
    for slots, seed in ((1, 0), (2, 1), (4, 2), (6, 3)):
        assert known_at_each_suggestion(spec, slots, random.Random(seed)) == expected


def makespan(spec: SweepSpec, slots: int, seed: int = 3) -> float:
    """Simulated end of a sweep whose trial k lasts 0.5..1.5 units (drawn by k, seeded).

    A slot takes the next suggestion as soon as it is free; when the searcher
    answers "wait", it stays free until the next trial ends.
    """
    searcher = build_searcher(spec)
    searcher.set_search_properties("loss", "min", {})
    durations = random.Random(seed)
    live: list[tuple[float, int, str, dict[str, Any]]] = []
    clock, started = 0.0, 0
    while started < spec.total_trials or live:
        while len(live) < slots and started < spec.total_trials:
            trial_id = f"t{started}"
            config = searcher.suggest(trial_id)
            if not isinstance(config, dict):
                break
            heapq.heappush(live, (clock + durations.uniform(0.5, 1.5), started, trial_id, config))
            started += 1
        clock, _, trial_id, config = heapq.heappop(live)
        searcher.on_trial_complete(trial_id, {"loss": objective(config)})
    return clock


def test_a_window_keeps_slots_busy_where_batches_leave_them_waiting() -> None:
    """The loss batches cost: at 2 slots a batch of 4 holds a free slot until its last
    trial ends; a window of 4 runs as a sweep without strict mode, trial for trial."""
    relaxed = spec_for("random", batch_size=4, num_samples=24).model_dump(mode="json")
    relaxed["reproducibility"] = {"strict": False}
    free = makespan(SweepSpec.model_validate(relaxed), slots=2)
    window = makespan(spec_for("random", batch_size=4, num_samples=24, schedule="window"), 2)
    batch = makespan(spec_for("random", batch_size=4, num_samples=24, schedule="batch"), 2)
    assert window == free
    assert batch > 1.05 * free, (batch, free)
