"""Every single-objective Optuna sampler runs past its start-up trials, seeded.

Drives the real searcher chain (``build_searcher``: Ray's OptunaSearch over a
real Optuna study) by hand, two trials in flight, as Ray's controller would.
A sampler whose model needs a package raysweep does not install fails here at
its first model-based suggestion (``cmaes`` did: Optuna imports it lazily).
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from factories import quadratic_sweep
from raysweep.config.load import parse_spec
from raysweep.search.build import build_searcher
from raysweep.search.checks import SAMPLER_NEEDS
from strict_searchers import simulate, spec_for

SPACE = {
    "x": {"type": "uniform", "low": 0.0, "high": 1.0},
    "y": {"type": "uniform", "low": -1.0, "high": 1.0},
}
STARTUP, TRIALS = 3, 8


def suggestions(sampler: str) -> list[dict[str, Any]]:
    """The configs the searcher suggests for TRIALS trials, told ``x^2 + y^2``."""
    search = {"algorithm": "optuna", "num_samples": TRIALS, "max_concurrent": 2,
              "options": {"sampler": sampler, "n_startup_trials": STARTUP}}  # fmt: skip
    searcher = build_searcher(parse_spec(quadratic_sweep(search=search, space=SPACE)))
    made: list[dict[str, Any]] = []
    for n in range(0, TRIALS, 2):
        pair = [(f"t{n + i}", searcher.suggest(f"t{n + i}")) for i in range(2)]
        for trial_id, config in pair:
            assert isinstance(config, dict)
            made.append({k: config[k] for k in SPACE})
            loss = config["x"] ** 2 + config["y"] ** 2
            searcher.on_trial_complete(trial_id, {"loss": loss, "training_iteration": 1})
    return made


@pytest.mark.parametrize("sampler", ["tpe", "cmaes", "gp", "random"])
def test_a_sampler_suggests_past_its_startup_the_same_for_the_same_seed(sampler: str) -> None:
    first = suggestions(sampler)
    assert len(first) == TRIALS
    assert all(0 <= c["x"] <= 1 and -1 <= c["y"] <= 1 for c in first)
    assert first == suggestions(sampler)


def test_samplers_needing_an_extra_name_what_it_installs() -> None:
    from raysweep._imports import EXTRAS

    assert set(SAMPLER_NEEDS.values()) <= set(EXTRAS)


@pytest.mark.parametrize("sampler", ["cmaes", "gp"])
def test_a_strict_sweep_suggests_the_same_whatever_the_slots_and_finish_order(
    sampler: str,
) -> None:
    """TPE's case is tests/search/test_strict.py; saved and restored there too."""
    spec = spec_for(f"optuna:{sampler}", schedule="window", num_samples=8)
    runs = []
    for slots, order_seed in [(1, 0), (4, 1)]:
        searcher = build_searcher(spec)
        searcher.set_search_properties("loss", "min", {})
        runs.append(simulate(searcher, spec.total_trials, slots, random.Random(order_seed)))
    assert runs[0] == runs[1]
    assert len({round(c["x"], 12) for c in runs[0]}) == spec.total_trials


@pytest.mark.parametrize(
    ("sampler", "scheduler", "warned"),
    [
        ("gp", "asha", True),
        ("cmaes", "median", True),
        ("tpe", "asha", False),
        ("gp", "fifo", False),
        ("gp", "hyperband", False),
    ],
)
def test_a_sampler_that_learns_from_completed_trials_only_is_warned_off_early_stopping(
    sampler: str, scheduler: str, warned: bool
) -> None:
    from raysweep.search.checks import search_warnings

    search = {"algorithm": "optuna", "num_samples": 20, "options": {"sampler": sampler}}
    stop: dict[str, Any] = {"type": scheduler}
    if scheduler in ("asha", "hyperband"):
        stop["max_t"] = 9
    spec = parse_spec(quadratic_sweep(search=search, space=SPACE, scheduler=stop))
    lines = search_warnings(spec)
    assert bool(lines) == warned
    if warned:
        assert f"sampler {sampler!r} learns from completed trials only" in lines[0]
        assert f"the {scheduler} scheduler stops most trials early" in lines[0]


@pytest.mark.parametrize(("sampler", "warned"), [("cmaes", True), ("tpe", False), ("gp", False)])
def test_cmaes_is_warned_that_it_draws_choice_parameters_at_random(
    sampler: str, warned: bool
) -> None:
    from raysweep.search.checks import search_warnings

    search = {"algorithm": "optuna", "num_samples": 20, "options": {"sampler": sampler}}
    space = {**SPACE, "act": {"type": "choice", "values": ["relu", "tanh"]}}
    lines = search_warnings(parse_spec(quadratic_sweep(search=search, space=space)))
    assert any("draws 'choice' parameters at random (act)" in line for line in lines) == warned
    numeric_only = parse_spec(quadratic_sweep(search=search, space=SPACE))
    assert search_warnings(numeric_only) == []
