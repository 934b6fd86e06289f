"""RAYSWEEP_RAY_PATCHES=off leaves Ray Tune's own code in place for every performance patch."""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import pytest
from ray.air._internal import usage
from ray.tune.execution.class_cache import _ActorClassCache
from ray.tune.execution.tune_controller import TuneController
from ray.tune.registry import _global_registry

from raysweep._raycompat import actor_env
from raysweep._raycompat.actor_reuse import keep_starting_actors
from raysweep._raycompat.entry_encoder import EntryEncoder
from raysweep._raycompat.registry_cache import memoized_registry
from raysweep._raycompat.result_buffer import buffer_env
from raysweep._raycompat.switch import PATCHES_ENV, PERF_PATCHES, perf_patches_on
from raysweep._raycompat.usage_tags import untagged_callbacks
from raysweep.errors import ConfigError


def _ray_code() -> tuple[Any, ...]:
    """What the performance patches replace while they are active."""
    return (
        vars(_global_registry).get("get"),  # an instance attribute only while memoized
        _ActorClassCache.get,
        TuneController._maybe_reuse_cached_actor,
        usage.tag_callbacks,
    )


PATCHES: dict[str, Callable[[], AbstractContextManager[Any]]] = {
    "registry_cache": memoized_registry,
    "actor_env": actor_env.plain_trial_actors,
    "actor_reuse": keep_starting_actors,
    "usage_tags": untagged_callbacks,
}


@pytest.mark.parametrize("name", sorted(PATCHES))
def test_a_context_patch_applies_when_on_and_not_when_off(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")  # as raysweep runs Ray
    before = _ray_code()
    monkeypatch.setenv(PATCHES_ENV, "on")
    with PATCHES[name]():
        assert _ray_code() != before  # the test could fail: on, Ray's code is replaced
    assert _ray_code() == before
    monkeypatch.setenv(PATCHES_ENV, "off")
    with PATCHES[name]():
        assert _ray_code() == before


def test_result_buffering_is_left_to_ray_when_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PATCHES_ENV, raising=False)
    assert buffer_env(100, 2) != {}  # every supported Ray's order is known
    monkeypatch.setenv(PATCHES_ENV, "off")
    assert buffer_env(100, 2) == {}


def test_ended_trials_are_left_to_the_snapshot_when_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PATCHES_ENV, "off")
    encoder = EntryEncoder()
    encoder.on_trial_complete(0, [], trial=object())
    assert not encoder.active and encoder._ended == []
    monkeypatch.setenv(PATCHES_ENV, "on")
    assert EntryEncoder().active


def test_the_actor_environment_is_not_prepared_when_off(monkeypatch: pytest.MonkeyPatch) -> None:
    wanted = actor_env.tune_actor_env()
    assert wanted
    for key in wanted:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv(PATCHES_ENV, "off")
    actor_env.prepare_environment()
    assert not any(key in os.environ for key in wanted)
    monkeypatch.setenv(PATCHES_ENV, "on")
    actor_env.prepare_environment()
    assert all(os.environ.get(key) == value for key, value in wanted.items())


@pytest.mark.parametrize(
    ("value", "on"), [("", True), ("on", True), ("OFF", False), (" off", False)]
)
def test_the_switch_reads_on_and_off(value: str, on: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PATCHES_ENV, value)
    assert perf_patches_on() is on


def test_an_unknown_value_is_an_error_naming_it_and_the_patches(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(PATCHES_ENV, "no")
    with pytest.raises(ConfigError) as info:
        perf_patches_on()
    assert f"{PATCHES_ENV}='no'" in str(info.value)
    assert all(name in str(info.value) for name in PERF_PATCHES)
