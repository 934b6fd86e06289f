"""Every private Ray name raysweep relies on resolves, in its expected shape, on the installed Ray.

Run on the pinned Ray by `make test` and on the other supported releases by
`make test-ray-matrix`: the targets of the installed release all resolve.
"""

from __future__ import annotations

import importlib.metadata
import sys
import textwrap
from pathlib import Path

import pytest

from raysweep._raycompat import declared, startup_check
from raysweep._raycompat.startup_check import (
    RAY_TESTED,
    TARGETS,
    RayCompatError,
    Target,
    check_ray,
    problem,
    ray_version,
    required_targets,
    version_tested,
)
from raysweep._raycompat.switch import PATCHES_ENV, PERF_PATCHES
from raysweep.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]
RAYSWEEP = REPO / "src" / "raysweep"
_TC = "ray.tune.execution.tune_controller"


@pytest.mark.parametrize("target", required_targets(ray_version()), ids=lambda t: t.name)
def test_every_target_of_this_ray_resolves(target: Target) -> None:
    assert problem(target) is None


def test_the_installed_ray_is_in_the_tested_range_and_check_passes_without_warning() -> None:
    assert version_tested(importlib.metadata.version("ray")), RAY_TESTED
    assert check_ray() == []
    assert check_ray("local") == []


def test_a_ray_outside_the_range_that_has_every_target_is_run_with_a_warning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(startup_check, "ray_version", lambda: "2.61.0")
    (warning,) = check_ray()
    assert warning.startswith("warning: Ray 2.61.0 is outside the tested range")
    assert RAY_TESTED in warning


def test_pyproject_and_docs_declare_the_tested_range() -> None:
    assert f'"ray[tune,default]{RAY_TESTED}"' in (REPO / "pyproject.toml").read_text()
    assert f"ray[tune,default]{RAY_TESTED}" in (REPO / "docs" / "ray-compat.md").read_text()


def test_the_tested_range_is_three_minors() -> None:
    for version in ("2.58.1", "2.58.9", "2.59.0", "2.60.0", "2.60.3"):
        assert version_tested(version), version
    for version in ("2.58.0", "2.57.2", "2.61.0", "3.0.0", "2.60", "nightly"):
        assert not version_tested(version), version


def test_every_target_names_a_raycompat_module_that_uses_it() -> None:
    for target in TARGETS:
        module = RAYSWEEP / "_raycompat" / f"{target.used_by}.py"
        assert module.is_file(), target
        leaf = target.attr.rpartition(".")[2] or target.module.rpartition(".")[2]
        assert leaf in module.read_text(), f"{module.name} does not mention {leaf} ({target})"


def test_a_moved_target_is_named_with_what_was_expected() -> None:
    gone = Target("ray.tune.tuner", "Tuner.no_such_method", "callable", (), "test")
    reshaped = Target(
        _TC, "TuneController._maybe_reuse_cached_actor", "callable", ("self", "other"), "test"
    )
    no_field = Target(_TC, "TuneController._no_such_field", "field", (), "test")
    no_module = Target("ray._private.no_such_module", "", "module", (), "test")
    assert "Tuner.no_such_method is missing" in (problem(gone) or "")
    assert "expected (self, other)" in (problem(reshaped) or "")
    assert "TuneController instances have no '_no_such_field'" in (problem(no_field) or "")
    assert "ray._private.no_such_module is missing" in (problem(no_module) or "")


def test_a_field_is_found_in_the_init_of_a_base_class_or_on_the_class() -> None:
    # Searcher.__init__ stores _metric; OptunaSearch inherits it. A property counts too.
    inherited = Target("ray.tune.search.searcher", "Searcher._metric", "field")
    on_class = Target(
        "ray.train._internal.checkpoint_manager",
        "_CheckpointManager.latest_checkpoint_result",
        "field",
    )
    assert problem(inherited) is None and problem(on_class) is None


def test_a_method_only_object_defines_is_missing() -> None:
    # Every class has object.__getstate__ (Python 3.11): no stand-in for Ray's own.
    target = Target("ray.tune.tuner", "Tuner.__getstate__", "callable", ("self",))
    assert "is missing" in (problem(target) or "")


def test_the_snapshot_document_must_keep_exactly_its_keys() -> None:
    exact = next(t for t in TARGETS if t.kind == "keys")
    assert problem(exact) is None
    one_more = Target(exact.module, exact.attr, "keys", (*exact.params[:-1],))
    message = problem(one_more) or ""
    assert "writes the keys" in message and "'start_time'" in message


def test_a_source_target_names_the_code_no_longer_there() -> None:
    target = Target(
        "ray.tune.schedulers.median_stopping_rule",
        "MedianStoppingRule.on_trial_result",
        "source",
        ("self._on_insufficient_samples(tune_controller, trial, time)", "self._no_such_call()"),
    )
    assert problem(target) == f"{target.name} no longer contains self._no_such_call()"


def test_a_lazy_target_is_read_in_its_file_without_importing_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "lazy_probe_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("raise RuntimeError('imported')\n")
    (package / "searcher.py").write_text(
        textwrap.dedent(
            """
            class Heavy:
                def __init__(self, space):
                    self._trials = {}
                    self._study = None

                def tell(self, trial_id, value):
                    pass
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    module = "lazy_probe_pkg.searcher"
    field = Target(module, "Heavy._trials", "field", lazy=True)
    method = Target(module, "Heavy.tell", "callable", ("self", "trial_id"), lazy=True)
    missing = Target(module, "Heavy._renamed", "field", lazy=True)
    reshaped = Target(module, "Heavy.tell", "callable", ("self", "trial"), lazy=True)
    assert problem(field) is None and problem(method) is None
    assert "Heavy instances have no '_renamed'" in (problem(missing) or "")
    assert "expected (self, trial)" in (problem(reshaped) or "")
    assert module not in sys.modules and "lazy_probe_pkg" not in sys.modules


def test_the_optuna_targets_are_checked_without_importing_optuna() -> None:
    import subprocess

    script = (
        "import sys; from raysweep._raycompat.startup_check import check_ray; "
        "check_ray(); check_ray('local'); print('optuna' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.stdout.strip() == "False", done.stdout + done.stderr


def test_a_target_of_other_releases_is_not_required() -> None:
    newer = Target(_TC, "TuneController.only_in_2_61", "callable", since=(2, 61, 0))
    older = Target(_TC, "TuneController.only_before_2_59", "callable", before=(2, 59, 0))
    assert newer.applies_to((2, 61, 0)) and not newer.applies_to((2, 60, 3))
    assert older.applies_to((2, 58, 1)) and not older.applies_to((2, 59, 0))
    assert newer.applies_to(None) and older.applies_to(None)


def test_check_requires_the_targets_of_the_installed_release_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    installed = startup_check.parse_version(ray_version())
    assert installed is not None
    other = Target(_TC, "TuneController.no_such_method", "callable", since=(99, 0, 0))
    this = Target(_TC, "TuneController.no_such_method", "callable", since=installed)
    monkeypatch.setattr(startup_check, "TARGETS", (*TARGETS, other))
    assert check_ray() == []
    monkeypatch.setattr(startup_check, "TARGETS", (*TARGETS, this))
    with pytest.raises(RayCompatError, match=r"TuneController\.no_such_method"):
        check_ray()


def test_the_local_engine_needs_only_the_scheduler_rung_and_searcher_targets() -> None:
    local = required_targets(ray_version(), "local")
    assert {t.used_by for t in local} == {"scheduler_state", "searcher_state", "asha_rungs"}
    names = {t.name for t in local}
    assert "ray.tune.schedulers.async_hyperband._Bracket.cutoff" in names
    assert "ray.tune.schedulers.hyperband.HyperBandScheduler._trial_info" in names
    assert "ray.tune.schedulers.hyperband._Bracket._halves" in names
    assert (
        "ray.tune.schedulers.median_stopping_rule.MedianStoppingRule._on_insufficient_samples"
        in names
    )
    assert all(t in required_targets(ray_version(), "ray") for t in local)


def test_check_names_every_problem(monkeypatch: pytest.MonkeyPatch) -> None:
    gone = Target("ray.tune.tuner", "Tuner.no_such_method", "callable", (), "test")
    monkeypatch.setattr(startup_check, "TARGETS", (*TARGETS, gone))
    with pytest.raises(RayCompatError) as info:
        check_ray()
    message = str(info.value)
    assert importlib.metadata.version("ray") in message and RAY_TESTED in message
    assert "Tuner.no_such_method" in message and info.value.exit_code == 2
    assert check_ray("local") == []  # the local engine does not use it


def test_with_the_performance_patches_off_their_targets_are_not_required(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gone_perf = Target(_TC, "TuneController.no_such_method", "callable", (), "actor_reuse")
    gone_core = Target(_TC, "TuneController.no_such_field", "field", (), "snapshots")
    monkeypatch.setattr(startup_check, "TARGETS", (*TARGETS, gone_perf))
    monkeypatch.setenv(PATCHES_ENV, "off")
    assert check_ray() == []
    assert not any(t.used_by in PERF_PATCHES for t in required_targets(ray_version(), "ray", False))
    monkeypatch.setattr(startup_check, "TARGETS", (*TARGETS, gone_perf, gone_core))
    with pytest.raises(RayCompatError) as info:
        check_ray()
    assert "no_such_field" in str(info.value) and "no_such_method" not in str(info.value)


def test_an_unknown_switch_value_is_refused_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PATCHES_ENV, "maybe")
    with pytest.raises(ConfigError, match=f"{PATCHES_ENV}='maybe'") as info:
        check_ray()
    assert info.value.exit_code == 2


def test_declared_targets_are_unique() -> None:
    keys = [(t.name, t.kind, t.since, t.before) for t in declared.TARGETS]
    assert len(keys) == len(set(keys))
