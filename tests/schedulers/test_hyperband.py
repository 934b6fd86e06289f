"""Hyperband's pause points: Ray Tune's own brackets', and checkpointed in a real sweep."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from ray.tune.experiment import Trial
from ray.tune.schedulers import HyperBandScheduler, TrialScheduler

from factories import make_sweep, quadratic_sweep
from raysweep.config.load import parse_spec
from raysweep.config.schema import HyperbandScheduler as HyperbandConfig
from raysweep.engines.ray.notices import (
    hyperband_concurrency_warning,
    hyperband_searcher_warning,
)
from raysweep.schedulers.hyperband import (
    hyperband_largest_bracket,
    hyperband_milestones,
    make_hyperband,
)

# (max_t, reduction_factor) pairs checked against Ray's own brackets.
RAY_SETTINGS = [(81, 3), (9, 3), (4, 2), (100, 3), (50, 2.5), (1, 3), (10, 4), (27, 1.5)]


def ray_milestones(max_t: int, eta: float) -> set[int]:
    """Every milestone of every bracket of one Hyperband band, from Ray's own brackets."""
    scheduler = HyperBandScheduler(max_t=max_t, reduction_factor=eta)
    found: set[int] = set()
    for s in range(scheduler._s_max_1):
        if scheduler._get_r0(s) == 0:
            continue
        bracket = scheduler._create_bracket(s)
        found.add(bracket._cumul_r)
        for _ in range(s):
            bracket.successive_halving("loss", -1.0)
            found.add(bracket._cumul_r)
    return found


@pytest.mark.parametrize(("max_t", "eta"), RAY_SETTINGS)
def test_milestones_are_ray_tunes(max_t: int, eta: float) -> None:
    config = HyperbandConfig(type="hyperband", max_t=max_t, reduction_factor=eta)
    assert hyperband_milestones(config) == ray_milestones(max_t, eta)


def test_milestones_of_the_default_band() -> None:
    config = HyperbandConfig(type="hyperband")
    assert sorted(hyperband_milestones(config)) == [1, 3, 9, 27, 81]


def test_paused_trials_resume_from_their_rung_checkpoint(
    ray_session: None, tmp_path: Path, run_in_process: Callable[[Path, dict[str, Any]], Path]
) -> None:
    """With checkpoint.frequency 0, a trial Hyperband pauses still continues where it stopped."""
    data = make_sweep(
        "lightgbm",
        name="hb-rungs",
        trainable_args={"dataset": "wine", "num_boost_round": 9},
        # 3 trials fill the bracket without halvings, 5 the one with rungs at 3 and 9.
        search={"algorithm": "random", "num_samples": 8},
        scheduler={"type": "hyperband", "max_t": 9, "reduction_factor": 3},
        checkpoint={"frequency": 0, "num_to_keep": 1},
        seed=5,
    )
    run_dir = run_in_process(tmp_path, data)
    log = (run_dir / "sweep_output.log").read_text()
    assert "hyperband pauses trials at iterations 1, 3, 9; lightgbm checkpoints there" in log
    starts = Counter(
        record["trial_id"]
        for record in map(json.loads, (run_dir / "trial_info.jsonl").read_text().splitlines())
        if record["event"] == "start"
    )
    assert len(starts) == 8
    assert max(starts.values()) > 1, "no trial was paused and resumed"
    for rows_file in (run_dir / "tune").glob("*/result.json"):
        rows = [json.loads(line) for line in rows_file.read_text().splitlines()]
        iterations = [row["training_iteration"] for row in rows]
        assert iterations == list(range(1, len(rows) + 1)), rows_file.parent.name
        assert all(row["rounds"] == row["training_iteration"] for row in rows)


@pytest.mark.parametrize(("max_t", "eta"), RAY_SETTINGS)
def test_largest_bracket_is_ray_tunes(max_t: int, eta: float) -> None:
    scheduler = HyperBandScheduler(max_t=max_t, reduction_factor=eta)
    sizes = [
        scheduler._create_bracket(s)._n0
        for s in range(scheduler._s_max_1)
        if scheduler._get_r0(s) > 0
    ]
    config = HyperbandConfig(type="hyperband", max_t=max_t, reduction_factor=eta)
    assert hyperband_largest_bracket(config) == max(sizes)


def scheduled_spec(
    algorithm: str, num_samples: int, max_concurrent: int | None, scheduler: str
) -> Any:
    """A quadratic sweep under ``scheduler`` with max_t 9 and reduction factor 3."""
    search = {"algorithm": algorithm, "num_samples": num_samples, "max_concurrent": max_concurrent}
    return parse_spec(
        quadratic_sweep(
            search=search, scheduler={"type": scheduler, "max_t": 9, "reduction_factor": 3}
        )
    )


@pytest.mark.parametrize(
    ("max_concurrent", "num_samples", "warns"),
    [(2, 30, True), (8, 30, True), (9, 30, False), (None, 30, False), (2, 2, False), (4, 5, True)],
)
def test_a_limit_below_the_largest_bracket_is_warned_about(
    max_concurrent: int | None, num_samples: int, warns: bool
) -> None:
    spec = scheduled_spec("random", num_samples, max_concurrent, "hyperband")
    warning = hyperband_concurrency_warning(spec)
    assert (warning is not None) == warns
    if warns:
        assert f"search.max_concurrent {max_concurrent} is below" in str(warning)
        assert f"({min(9, num_samples)} trials)" in str(warning)


@pytest.mark.parametrize(
    ("algorithm", "scheduler", "max_concurrent", "warns"),
    [
        ("optuna", "hyperband", None, True),  # raysweep admits all 20 trials
        ("hyperopt", "hyperband", 20, True),
        ("optuna", "hyperband", 4, False),  # it learns from what finishes (the other warning)
        ("random", "hyperband", None, False),
        ("optuna", "asha", None, False),
    ],
)
def test_a_model_based_searcher_under_hyperband_is_warned_about(
    algorithm: str, scheduler: str, max_concurrent: int | None, warns: bool
) -> None:
    spec = scheduled_spec(algorithm, 20, max_concurrent, scheduler)
    warning = hyperband_searcher_warning(spec)
    assert (warning is not None) == warns
    if warns:
        assert f"{algorithm} suggests every configuration before any result" in str(warning)


def bracket_decisions(scheduler: HyperBandScheduler) -> tuple[str, str]:
    """(decision for a trial at the last rung, for one at an earlier rung), max_t 9, eta 3.

    Ray fills the brackets in turn: 3 trials run straight to 9, then 5 are halved at 3.
    """
    trials = [Trial("fit", config={}, stub=True) for _ in range(8)]
    for trial in trials:
        scheduler.on_trial_add(None, trial)
    last_rung = scheduler.on_trial_result(None, trials[0], {"training_iteration": 9, "loss": 1})
    earlier_rung = scheduler.on_trial_result(None, trials[3], {"training_iteration": 3, "loss": 1})
    return last_rung, earlier_rung


def test_a_trial_its_bracket_is_done_with_stops_at_once() -> None:
    """Ray pauses it until the bracket finishes; a pause still saving then was never stopped."""
    ray_decisions = bracket_decisions(
        HyperBandScheduler(metric="loss", mode="min", max_t=9, reduction_factor=3)
    )
    assert ray_decisions == (TrialScheduler.PAUSE, TrialScheduler.PAUSE)
    config = HyperbandConfig(type="hyperband", max_t=9, reduction_factor=3)
    scheduler = make_hyperband(config, "training_iteration")
    scheduler.set_search_properties("loss", "min")
    assert bracket_decisions(scheduler) == (TrialScheduler.STOP, TrialScheduler.PAUSE)
