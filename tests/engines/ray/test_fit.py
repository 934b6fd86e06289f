"""engines/ray/fit.py: one experiment run through the one Tuner builder on the session's real
Ray, then restored from its directory: finished trials are kept, not run again."""

from __future__ import annotations

from pathlib import Path

from factories import make_spec
from raysweep.engines.ray.fit import run_tuner
from raysweep.engines.ray.tuner import BuildOptions
from raysweep.search.indexed import INDEX_KEY


def test_a_new_experiment_runs_every_trial_and_a_restore_keeps_them(
    ray_session: None, tmp_path: Path
) -> None:
    spec = make_spec(
        space={"x": {"type": "uniform", "low": 0, "high": 1}, "steps": 2},
        search={"algorithm": "random", "num_samples": 3, "max_concurrent": 1},
    )
    options = BuildOptions(run_dir=tmp_path)
    trials = run_tuner(spec, options)
    assert len(trials) == 3
    assert {t.status for t in trials} == {"TERMINATED"}
    assert all(t.last_result["training_iteration"] == 2 for t in trials)
    assert all("loss" in t.last_result for t in trials)
    assert sorted(t.config[INDEX_KEY] for t in trials) == [0, 1, 2]  # suggestion order
    started = {t.trial_id: t.last_result["timestamp"] for t in trials}

    restored = run_tuner(spec, options, restore=tmp_path / "tune")
    assert {t.trial_id for t in restored} == set(started)
    assert {t.trial_id: t.last_result["timestamp"] for t in restored} == started  # not rerun
