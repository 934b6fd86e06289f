"""Shared by the strict-mode searcher tests (tests/search/test_strict.py, test_window.py).

A strict spec, a searcher that records what it is told, and a simulated
schedule that runs trials a few at a time and finishes them in a random order:
the real searcher chain, no Ray cluster.
"""

from __future__ import annotations

import random
from typing import Any

from ray.tune.search import Searcher

from factories import quadratic_sweep
from raysweep.config.load import parse_spec
from raysweep.config.schema import SweepSpec

SPACE: dict[str, Any] = {
    "x": {"type": "uniform", "low": 0, "high": 6},
    "y": {"type": "int", "low": -3, "high": 3},
    "steps": 2,
}
SCHEDULES = ("batch", "window")


def spec_for(
    algorithm: str,
    batch_size: int = 3,
    num_samples: int = 10,
    schedule: str = "batch",
    **extra: Any,
) -> SweepSpec:
    """A strict sweep of the quadratic (TPE/HyperOpt after 2 random trials).

    ``"optuna:gp"``: Optuna with that sampler (``tpe`` unless said).
    """
    algorithm, _, sampler = algorithm.partition(":")
    options = {"optuna": {"n_startup_trials": 2}, "hyperopt": {"n_initial_points": 2}}
    search = {
        "algorithm": algorithm,
        "num_samples": num_samples,
        "options": {**options.get(algorithm, {}), **({"sampler": sampler} if sampler else {})},
    }
    strict = {"strict": True, "batch_size": batch_size, "strict_schedule": schedule}
    data = quadratic_sweep(
        name="strict", space=SPACE, search=search, seed=11, reproducibility=strict, **extra
    )
    return parse_spec(data)


def objective(config: dict[str, Any]) -> float:
    return float((config["x"] - 3.0) ** 2 + (config["y"] + 1) ** 2)


def simulate(searcher: Searcher, total: int, slots: int, rng: random.Random) -> list[Any]:
    """Run ``total`` trials ``slots`` at a time, finishing them in a random order.

    Returns every suggested config in suggestion order.
    """
    live: dict[str, dict[str, Any]] = {}
    configs: list[Any] = []
    next_id = 0
    while len(configs) < total or live:
        while len(live) < slots and len(configs) < total:
            trial_id = f"ray{next_id:04d}_{rng.random():.6f}"  # ids Ray would make up
            config = searcher.suggest(trial_id)
            if config is None or config == Searcher.FINISHED:
                break
            next_id += 1
            live[trial_id] = config
            configs.append(config)
        done = rng.choice(sorted(live))
        config = live.pop(done)
        searcher.on_trial_result(done, {"loss": objective(config) + 1, "training_iteration": 1})
        searcher.on_trial_complete(done, {"loss": objective(config), "training_iteration": 2})
    return configs


class Recorder(Searcher):
    """A searcher that numbers its suggestions and records what it is told."""

    def __init__(self) -> None:
        super().__init__(metric="loss", mode="min")
        self.events: list[tuple[str, str, Any]] = []
        self.count = 0

    def suggest(self, trial_id: str) -> dict[str, Any]:
        self.events.append(("suggest", trial_id, None))
        self.count += 1
        return {"n": self.count - 1}

    def on_trial_result(self, trial_id: str, result: dict[str, Any]) -> None:
        self.events.append(("result", trial_id, result["loss"]))

    def on_trial_complete(
        self, trial_id: str, result: dict[str, Any] | None = None, error: bool = False
    ) -> None:
        self.events.append(("complete", trial_id, None if result is None else result["loss"]))


def curve(config: dict[str, Any], step: int) -> float:
    """A falling learning curve whose end is :func:`objective` (early steps rank roughly)."""
    return objective(config) + 4.0 / step


def simulate_sweep(spec: SweepSpec, slots: int, rng: random.Random) -> dict[int, tuple[Any, ...]]:
    """Run ``spec``'s searcher and scheduler, ``slots`` trials at once, each step of each
    trial lasting a random time: the calls Ray's controller makes, no Ray cluster.

    Returns, per trial index: its config, iterations run, status and last value.
    """
    import heapq

    from ray.tune.experiment import Trial
    from ray.tune.schedulers import TrialScheduler

    from raysweep.schedulers.build import build_scheduler
    from raysweep.search.build import build_searcher
    from raysweep.search.indexed import INDEX_KEY

    searcher, scheduler = build_searcher(spec), build_scheduler(spec)
    searcher.set_search_properties(spec.metric, spec.mode, {})
    scheduler.set_search_properties(spec.metric, spec.mode)
    max_t = spec.iteration_budget or 1
    events: list[tuple[float, int, str]] = []  # (time step ends, tie-break, trial id)
    trials: dict[str, Trial] = {}
    steps: dict[str, int] = {}
    out: dict[int, tuple[Any, ...]] = {}
    now, made = 0.0, 0

    def start() -> None:
        nonlocal made
        while len(steps) < slots and made < spec.total_trials:
            trial_id = f"t{made}"
            config = searcher.suggest(trial_id)
            if not isinstance(config, dict):
                return  # strict mode waits for a trial to end
            made += 1
            trials[trial_id] = Trial("noop", config=config, stub=True, trial_id=trial_id)
            scheduler.on_trial_add(None, trials[trial_id])  # type: ignore[arg-type]
            steps[trial_id] = 0
            heapq.heappush(events, (now + rng.uniform(0.2, 2.0), made, trial_id))

    start()
    while events:
        now, _, trial_id = heapq.heappop(events)
        trial = trials[trial_id]
        steps[trial_id] += 1
        value = curve(trial.config, steps[trial_id])
        result = {spec.metric: value, "training_iteration": steps[trial_id]}
        searcher.on_trial_result(trial_id, result)
        decision = scheduler.on_trial_result(None, trial, result)  # type: ignore[arg-type]
        if steps[trial_id] < max_t and decision != TrialScheduler.STOP:
            heapq.heappush(events, (now + rng.uniform(0.2, 2.0), made, trial_id))
            continue
        status = "completed" if steps[trial_id] >= max_t else "stopped"
        out[trial.config[INDEX_KEY]] = (trial.config, steps.pop(trial_id), status, value)
        scheduler.on_trial_complete(None, trial, result)  # type: ignore[arg-type]
        searcher.on_trial_complete(trial_id, result)
        start()
    return out
