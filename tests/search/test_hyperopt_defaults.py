"""HyperOpt's searcher as raysweep builds it."""

from __future__ import annotations

from ray import tune

from raysweep.search.hyperopt import N_INITIAL_POINTS, make_hyperopt


def startup_trials(options: dict[str, int]) -> int:
    space = {"x": tune.uniform(0.0, 1.0)}
    searcher = make_hyperopt(space, 20, seed=1, metric="loss", mode="min", options=options)
    return int(searcher.algo.keywords["n_startup_jobs"])


def test_ten_random_trials_before_tpe_by_default() -> None:
    assert N_INITIAL_POINTS == 10
    assert startup_trials({}) == 10


def test_n_initial_points_option_is_passed_through() -> None:
    assert startup_trials({"n_initial_points": 3}) == 3
