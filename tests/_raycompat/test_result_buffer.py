"""Ray Tune's result buffering, set in the order the pinned Ray passes it on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from raysweep._raycompat.result_buffer import (
    LENGTH_ENV,
    TIME_ENV,
    argument_order,
    buffer_env,
)

REPORTS = 10


def ten_reports(config: dict[str, Any]) -> None:
    from ray import tune

    for step in range(REPORTS):
        tune.report({"loss": float(step)})


def train_calls(tmp_path: Path, env: dict[str, str]) -> int:
    """How many train tasks Ray Tune's controller gave one ten-report trial."""
    from ray import tune
    from ray.tune.execution.tune_controller import TuneController

    calls: list[str] = []
    original = TuneController._schedule_trial_train

    def counted(self: Any, trial: Any) -> None:
        calls.append(trial.trial_id)
        original(self, trial)

    with pytest.MonkeyPatch.context() as patch:
        for key, value in env.items():
            patch.setenv(key, value)
        if TIME_ENV not in env:
            patch.delenv(TIME_ENV, raising=False)
        patch.setattr(TuneController, "_schedule_trial_train", counted)
        tuner = tune.Tuner(
            ten_reports,
            run_config=tune.RunConfig(storage_path=str(tmp_path), name="buffer", verbose=0),
        )
        (result,) = tuner.fit()
    assert result.metrics["training_iteration"] == REPORTS
    return len(calls)


def test_the_pinned_ray_passes_the_buffer_settings_crossed() -> None:
    # Once Ray passes them in order, buffer_env follows on its own; this test then
    # says so, and the docstring of _raycompat/result_buffer.py should too.
    assert argument_order() == "crossed"


def test_buffered_reports_reach_the_controller_in_one_batch(
    ray_session: None, tmp_path: Path
) -> None:
    env = buffer_env(100, 2)  # read from Ray's own code, before the test wraps it
    unbuffered = train_calls(tmp_path / "off", {LENGTH_ENV: "1"})
    buffered = train_calls(tmp_path / "on", env)
    assert unbuffered > REPORTS  # one round trip per report, and one for the end
    assert buffered <= 3, buffered


def test_a_buffer_needs_room_for_two_results() -> None:
    with pytest.raises(ValueError, match="got 1, 2"):
        buffer_env(1, 2)
