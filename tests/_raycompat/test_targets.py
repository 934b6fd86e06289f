"""Every private Ray name raysweep relies on resolves, in its expected shape, on pinned Ray."""

from __future__ import annotations

import importlib.metadata

import pytest

from raysweep._raycompat.targets import (
    RAY_TESTED,
    TARGETS,
    RayCompatError,
    Target,
    check_ray,
    problem,
    version_tested,
)


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.name)
def test_every_target_resolves_on_the_pinned_ray(target: Target) -> None:
    assert problem(target) is None


def test_the_pinned_ray_is_in_the_tested_range_and_check_passes() -> None:
    assert version_tested(importlib.metadata.version("ray")), RAY_TESTED
    assert check_ray() == []


def test_pyproject_declares_the_tested_range() -> None:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    assert f"ray[tune,default]{RAY_TESTED}" in text


def test_a_moved_target_is_named_with_the_version_and_range() -> None:
    gone = Target("ray.tune.tuner", "Tuner.no_such_method", "callable", (), "test")
    reshaped = Target(
        "ray.tune.execution.tune_controller",
        "TuneController._maybe_reuse_cached_actor",
        "callable",
        ("self", "other"),
        "test",
    )
    assert "Tuner.no_such_method is missing" in (problem(gone) or "")
    assert "expected (self, other)" in (problem(reshaped) or "")
    assert not version_tested("2.59.9") and not version_tested("2.61.0")
    assert version_tested("2.60.0") and version_tested("2.60.3")


def test_check_names_every_problem(monkeypatch: pytest.MonkeyPatch) -> None:
    from raysweep._raycompat import targets

    gone = Target("ray.tune.tuner", "Tuner.no_such_method", "callable", (), "test")
    monkeypatch.setattr(targets, "TARGETS", (*TARGETS, gone))
    with pytest.raises(RayCompatError) as info:
        check_ray()
    message = str(info.value)
    assert importlib.metadata.version("ray") in message and RAY_TESTED in message
    assert "Tuner.no_such_method" in message and info.value.exit_code == 2
