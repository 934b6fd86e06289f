"""Ray Tune settings applied per run: the user's own values win."""

from __future__ import annotations

import os
from typing import Any

import pytest

from factories import make_sweep
from raysweep.config.load import parse_spec
from raysweep.config.schema import SweepSpec
from raysweep.engines.ray import ray_env
from raysweep.engines.ray.ray_env import (
    BUFFER_LENGTH_ENV,
    BUFFER_TIME_ENV,
    apply_run_env_defaults,
    buffers_results,
)


@pytest.fixture
def fresh_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """An environment raysweep has not touched yet (restored after the test)."""
    for key in (*ray_env.RAY_ENV_DEFAULTS, BUFFER_LENGTH_ENV, BUFFER_TIME_ENV):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setattr(ray_env, "_user_set", None)
    return monkeypatch


def test_a_sweep_nothing_stops_early_buffers_its_results(fresh_env: pytest.MonkeyPatch) -> None:
    apply_run_env_defaults(10, buffer_results=True)
    assert int(os.environ[BUFFER_LENGTH_ENV]) > 1
    assert float(os.environ[BUFFER_TIME_ENV]) > 0


def test_a_later_run_that_stops_trials_early_turns_buffering_off(
    fresh_env: pytest.MonkeyPatch,
) -> None:
    apply_run_env_defaults(10, buffer_results=True)
    apply_run_env_defaults(10, buffer_results=False)
    assert BUFFER_LENGTH_ENV not in os.environ  # set at all, Ray warns with Hyperband
    assert BUFFER_TIME_ENV not in os.environ


def test_the_users_buffer_setting_is_kept(fresh_env: pytest.MonkeyPatch) -> None:
    fresh_env.setenv(BUFFER_LENGTH_ENV, "7")
    apply_run_env_defaults(10, buffer_results=False)
    assert os.environ[BUFFER_LENGTH_ENV] == "7"
    apply_run_env_defaults(10, buffer_results=True)
    assert os.environ[BUFFER_LENGTH_ENV] == "7"
    assert BUFFER_TIME_ENV not in os.environ


def spec_with(**fields: Any) -> SweepSpec:
    """A LightGBM sweep without checkpoints; ``fields`` replace its top-level keys."""
    return parse_spec(
        {**make_sweep("lightgbm", name="buffer", checkpoint={"frequency": 0}), **fields}
    )


def test_only_trials_that_neither_stop_early_nor_checkpoint_are_buffered() -> None:
    assert buffers_results(spec_with())
    assert not buffers_results(spec_with(scheduler={"type": "asha", "max_t": 10}))
    assert not buffers_results(spec_with(stop={"max_iterations": 5}))
    assert not buffers_results(spec_with(checkpoint={"frequency": 2}))
    assert not buffers_results(spec_with(trainable="examples.checkpointing:fit"))
