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
