"""Trainable lookups in Ray Tune's registry are answered once per fit, never stale."""

from __future__ import annotations

from typing import Any

import pytest
from ray.experimental.internal_kv import _internal_kv_del
from ray.tune.error import TuneError
from ray.tune.registry import (
    TRAINABLE_CLASS,
    _global_registry,
    _has_trainable,
    _make_key,
    get_trainable_cls,
    register_trainable,
)

from raysweep._raycompat.registry_cache import memoized_registry

NAME = "registry_cache_probe"


def first(config: dict[str, Any]) -> None:
    """A trainable to register."""


def second(config: dict[str, Any]) -> None:
    """Another one, registered under the same name."""


def drop_from_gcs(name: str) -> None:
    """Delete the registry entry behind Ray Tune's back, in Ray's key-value store."""
    _internal_kv_del(_make_key(_global_registry.prefix, TRAINABLE_CLASS, name))


@pytest.mark.usefixtures("ray_session")
def test_lookups_within_a_fit_do_not_go_back_to_the_gcs() -> None:
    register_trainable(NAME, first)
    with memoized_registry():
        cls = get_trainable_cls(NAME)
        drop_from_gcs(NAME)
        assert get_trainable_cls(NAME) is cls
        assert _has_trainable(NAME)
    with pytest.raises(TuneError, match="Unknown trainable"):
        get_trainable_cls(NAME)  # Ray's own lookup again once the block ends
    assert not _has_trainable(NAME)
    assert "get" not in vars(_global_registry)


@pytest.mark.usefixtures("ray_session")
def test_registering_again_drops_what_was_memoized() -> None:
    register_trainable(NAME, first)
    with memoized_registry():
        old = get_trainable_cls(NAME)
        register_trainable(NAME, second)
        new = get_trainable_cls(NAME)
        assert new is not old
    drop_from_gcs(NAME)


@pytest.mark.usefixtures("ray_session")
def test_an_absent_trainable_is_asked_for_again() -> None:
    drop_from_gcs(NAME)
    with memoized_registry():
        assert not _has_trainable(NAME)
        register_trainable(NAME, first)
        assert _has_trainable(NAME)
    drop_from_gcs(NAME)
