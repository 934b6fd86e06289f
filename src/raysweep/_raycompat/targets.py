"""Every piece of Ray's private API raysweep relies on, declared and checked at start-up.

Each :class:`Target` names the exact module attribute a patch replaces or reads,
what it must be (a callable with these leading parameters, a class, a value),
and the raysweep module that uses it. :func:`check_ray` resolves them all on
the installed Ray before ``sweep run``/``resume`` writes anything: a Ray whose
internals moved is refused with exit 2 rather than quietly losing crash
recovery or the speed-ups (docs/ray-compat.md lists why each one exists).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
from dataclasses import dataclass
from typing import Any, Literal

from raysweep.errors import SweepError

# The Ray releases raysweep is tested with (pyproject.toml declares the same range).
RAY_TESTED = ">=2.60.0,<2.61"
_LOWEST, _BELOW = (2, 60, 0), (2, 61, 0)

Kind = Literal["callable", "class", "value"]


class RayCompatError(SweepError):
    """The installed Ray's internals differ from the ones raysweep was tested with."""

    exit_code = 2


@dataclass(frozen=True)
class Target:
    """One private Ray name: ``module`` + dotted ``attr``, its kind and first parameters."""

    module: str
    attr: str
    kind: Kind
    params: tuple[str, ...] = ()
    used_by: str = ""

    @property
    def name(self) -> str:
        return f"{self.module}.{self.attr}"


_TC = "ray.tune.execution.tune_controller"
TARGETS: tuple[Target, ...] = (
    # snapshots.py: fast, incremental experiment snapshots
    Target(_TC, "TuneController.save_to_dir", "callable", ("self",), "snapshots"),
    Target(_TC, "TuneController._get_trial_checkpoints", "callable", ("self",), "snapshots"),
    Target(_TC, "TuneController.experiment_state_file_name", "value", (), "snapshots"),
    Target(
        "ray.train._internal.storage",
        "_upload_to_fs_path",
        "callable",
        ("local_path", "fs", "fs_path", "exclude"),
        "snapshots",
    ),
    Target("ray.tune.utils.serialization", "TuneFunctionEncoder", "class", (), "snapshots"),
    # entry_warmer.py: ended trials' snapshot entries encoded as they end
    Target(
        "ray.tune.experiment.trial", "Trial.get_json_state", "callable", ("self",), "entry_warmer"
    ),
    # checkpoint_rotation.py: rotation waits for a stored snapshot
    Target(
        "ray.train._internal.checkpoint_manager",
        "_delete_fs_path",
        "callable",
        ("fs", "fs_path"),
        "checkpoint_rotation",
    ),
    Target(
        "ray.tune.execution.experiment_state",
        "_ExperimentCheckpointManager.on_trial_checkpoint",
        "callable",
        ("self", "trial"),
        "checkpoint_rotation",
    ),
    # repair.py: catch a killed experiment's snapshot up with its checkpoints
    Target("ray.train._internal.checkpoint_manager", "_CheckpointManager", "class", (), "repair"),
    Target("ray.train._internal.session", "_TrainingResult", "class", (), "repair"),
    Target(
        "ray.tune.trainable.metadata",
        "_TrainingRunMetadata.from_json_state",
        "callable",
        ("json_state",),
        "repair",
    ),
    Target(
        "ray.tune.trainable.metadata",
        "_TrainingRunMetadata.get_json_state",
        "callable",
        ("self",),
        "repair",
    ),
    Target("ray.tune.result", "DEBUG_METRICS", "value", (), "repair"),
    # trial_rows.py: per-trial rows safe against a racing upload
    Target(
        "ray.tune.logger.json",
        "JsonLoggerCallback._restore_from_remote",
        "callable",
        ("self", "file_name", "trial"),
        "trial_rows",
    ),
    # actor_env.py: trial actors start as plain workers on a local Ray
    Target(
        "ray.tune.execution.class_cache",
        "_ActorClassCache.get",
        "callable",
        ("self", "trainable_cls"),
        "actor_env",
    ),
    Target("ray.tune.execution.class_cache", "DEFAULT_ENV_VARS", "value", (), "actor_env"),
    Target("ray.tune.execution.class_cache", "ENV_VARS_TO_PROPAGATE", "value", (), "actor_env"),
    # actor_reuse.py: a starting actor is not killed for a cached one
    Target(
        _TC,
        "TuneController._maybe_reuse_cached_actor",
        "callable",
        ("self", "trial"),
        "actor_reuse",
    ),
    Target(
        "ray.air.execution._internal.actor_manager",
        "RayActorManager.is_actor_started",
        "callable",
        ("self", "tracked_actor"),
        "actor_reuse",
    ),
    # result_buffer.py: result buffering set in the order the controller passes it on
    Target(
        _TC, "TuneController._schedule_trial_train", "callable", ("self", "trial"), "result_buffer"
    ),
    Target(
        "ray.tune.trainable.trainable",
        "Trainable.train_buffered",
        "callable",
        ("self", "buffer_time_s", "max_buffer_length"),
        "result_buffer",
    ),
    # registry_cache.py: trainable lookups memoized per fit
    Target("ray.tune.registry", "_global_registry", "value", (), "registry_cache"),
    # tuner_access.py: restored configs, the trials of a ResultGrid
    Target("ray.tune.tuner", "Tuner._local_tuner", "value", (), "tuner_access"),
    Target(
        "ray.tune.impl.tuner_internal",
        "TunerInternal.get_run_config",
        "callable",
        ("self",),
        "tuner_access",
    ),
    Target("ray.tune.result_grid", "ResultGrid._experiment_analysis", "value", (), "tuner_access"),
    # shutdown.py: stop the local Ray's autoscaler monitor before ray.shutdown
    Target("ray._private.worker", "_global_node", "value", (), "shutdown"),
    Target("ray._private.ray_constants", "PROCESS_TYPE_MONITOR", "value", (), "shutdown"),
    # interrupt.py: Ray keeps raysweep's SIGTERM handler; Tune's loop ended by SIGUSR1
    Target(
        "ray._private.utils", "set_sigterm_handler", "callable", ("sigterm_handler",), "interrupt"
    ),
    Target("ray.tune.tune", "_setup_signal_catching", "callable", (), "interrupt"),
)


def ray_version() -> str:
    """The installed Ray's version ("not installed" when there is none)."""
    try:
        return importlib.metadata.version("ray")
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def version_tested(version: str) -> bool:
    """Whether ``version`` lies in :data:`RAY_TESTED`."""
    try:
        parts = tuple(int(p) for p in version.split(".")[:3])
    except ValueError:
        return False
    return _LOWEST <= parts < _BELOW


def resolve(target: Target) -> Any:
    """The object ``target`` names (AttributeError/ImportError when it is gone).

    Instance attributes set in ``__init__`` (``_local_tuner``,
    ``_experiment_analysis``) are checked in the class's ``__init__`` source.
    """
    node: Any = importlib.import_module(target.module)
    names = target.attr.split(".")
    for i, name in enumerate(names):
        if hasattr(node, name):
            node = getattr(node, name)
            continue
        if i == len(names) - 1 and inspect.isclass(node) and _sets_in_init(node, name):
            return None
        raise AttributeError(f"{target.name}: no attribute {name!r}")
    return node


def _sets_in_init(cls: type, name: str) -> bool:
    try:
        init = cls.__dict__.get("__init__")
        return init is not None and f"self.{name} =" in inspect.getsource(init)
    except (OSError, TypeError):
        return False


def problem(target: Target) -> str | None:
    """Why ``target`` does not match the installed Ray (None when it does)."""
    try:
        obj = resolve(target)
    except (ImportError, AttributeError) as exc:
        return f"{target.name} is missing ({exc})"
    if target.kind == "class" and not inspect.isclass(obj):
        return f"{target.name} is no longer a class"
    if target.kind == "callable":
        if not callable(obj):
            return f"{target.name} is no longer callable"
        try:
            names = tuple(inspect.signature(obj).parameters)
        except (TypeError, ValueError):
            return None
        if names[: len(target.params)] != target.params:
            return (
                f"{target.name} takes ({', '.join(names)}), expected ({', '.join(target.params)})"
            )
    return None


def check_ray() -> list[str]:
    """RayCompatError when a target does not match; warnings for an untested version."""
    version = ray_version()
    problems = [p for p in (problem(t) for t in TARGETS) if p]
    if problems:
        raise RayCompatError(
            f"Ray {version} is installed, but raysweep supports ray{RAY_TESTED} (the range it "
            f"is tested with), and this Ray's internals differ:\n  "
            + "\n  ".join(problems)
            + f"\nInstall a supported Ray: pip install 'ray[tune,default]{RAY_TESTED}'. "
            "Nothing was started or written."
        )
    if not version_tested(version):
        return [
            f"warning: Ray {version} is outside the tested range ray{RAY_TESTED}; every "
            "internal raysweep relies on was found, but it is untested"
        ]
    return []
