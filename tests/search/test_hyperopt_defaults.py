"""HyperOpt's searcher as raysweep builds it."""

from __future__ import annotations

from typing import Any

from ray import tune

from factories import quadratic_sweep
from raysweep.config.load import parse_spec
from raysweep.search.build import build_searcher, innermost
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


def hyperopt_spec(options: dict[str, Any]) -> Any:
    search = {"algorithm": "hyperopt", "num_samples": 20, "options": options}
    return parse_spec(quadratic_sweep(search=search))


def test_a_sweep_without_options_gets_ten_start_up_trials() -> None:
    spec = hyperopt_spec({})
    assert spec.search.options["n_initial_points"] == 10  # what spec.json records
    searcher: Any = innermost(build_searcher(spec))
    assert searcher.algo.keywords["n_startup_jobs"] == 10


def test_a_sweep_with_options_gets_its_own_count() -> None:
    searcher: Any = innermost(build_searcher(hyperopt_spec({"n_initial_points": 4})))
    assert searcher.algo.keywords["n_startup_jobs"] == 4
