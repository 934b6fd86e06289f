"""Hyperband's pause points: Ray Tune's own brackets', and checkpointed in a real sweep."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from ray.tune.schedulers import HyperBandScheduler

from raysweep.config.schema import HyperbandScheduler as HyperbandConfig
from raysweep.schedulers.hyperband import hyperband_milestones


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


@pytest.mark.parametrize(
    ("max_t", "eta"), [(81, 3), (9, 3), (4, 2), (100, 3), (50, 2.5), (1, 3), (10, 4), (27, 1.5)]
)
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
    run_dir = run_in_process(
        tmp_path,
        {
            "name": "hb-rungs",
            "trainable": "lightgbm",
            "trainable_args": {"dataset": "wine", "num_boost_round": 9},
            "metric": "val_loss",
            "mode": "min",
            "space": {"learning_rate": {"type": "loguniform", "low": 0.01, "high": 0.3}},
            # 3 trials fill the bracket without halvings, 5 the one with rungs at 3 and 9.
            "search": {"algorithm": "random", "num_samples": 8},
            "scheduler": {"type": "hyperband", "max_t": 9, "reduction_factor": 3},
            "checkpoint": {"frequency": 0, "num_to_keep": 1},
            "seed": 5,
        },
    )
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
