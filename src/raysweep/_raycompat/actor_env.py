"""Trial actors that start as plain Ray workers on a local Ray.

Ray Tune registers every trainable with ``runtime_env={"env_vars": ...}``
(``PL_DISABLE_FORK=1`` plus a few variables copied from the driver). Any
non-empty runtime env makes Ray start each trial worker through
``setup_worker.py`` (a whole extra Python start-up with ``import ray``, ~0.4 s
of CPU per worker on a 2-core VM) after a round trip to the runtime-env agent.

A local Ray started by raysweep hands its workers this process's environment,
so when that environment already holds exactly what Tune would set, the runtime
env adds nothing and is left out. Anything else (an existing cluster, a Ray
started elsewhere, a variable that differs) keeps Ray Tune's own behaviour.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from raysweep._raycompat.switch import perf_patch_applies

_local: tuple[str, dict[str, str]] | None = None  # (node id, environment Ray started with)


def prepare_environment() -> None:
    """Put the variables Ray Tune gives trial actors into this environment before ``ray.init``.

    A value the user exported wins (and then Tune's runtime env is used as usual).
    Nothing is set with the performance patches switched off.
    """
    if not perf_patch_applies():
        return
    for key, value in (tune_actor_env() or {}).items():
        os.environ.setdefault(key, value)


def remember_local_ray(environment: Mapping[str, str]) -> None:
    """Record the local Ray just started here and the environment its workers inherit."""
    global _local
    import ray

    _local = (ray.get_runtime_context().get_node_id(), dict(environment))


def forget_local_ray() -> None:
    """Forget it (before ``ray.shutdown``): Ray Tune's own behaviour from then on."""
    global _local
    _local = None


@contextmanager
def plain_trial_actors() -> Iterator[None]:
    """While the block runs, trial actors get no runtime env when it would add nothing."""
    cache_cls = _cache_class() if perf_patch_applies() else None
    tune_get = getattr(cache_cls, "get", None)
    if cache_cls is None or tune_get is None or "_raysweep" in getattr(tune_get, "__name__", ""):
        yield
        return

    def _raysweep_get(cache: Any, trainable_cls: Any) -> Any:
        import ray

        if not inherits_tune_env():
            return tune_get(cache, trainable_cls)
        if trainable_cls not in cache._cache:
            cache._cache[trainable_cls] = ray.remote(trainable_cls)
        return cache._cache[trainable_cls]

    cache_cls.get = _raysweep_get
    try:
        yield
    finally:
        cache_cls.get = tune_get


def tune_actor_env() -> dict[str, str] | None:
    """The ``env_vars`` Ray Tune gives trial actors now (None if Ray Tune changed)."""
    try:
        from ray.tune.execution.class_cache import DEFAULT_ENV_VARS, ENV_VARS_TO_PROPAGATE
    except ImportError:
        return None
    env = dict(DEFAULT_ENV_VARS)
    env.update({key: os.environ[key] for key in ENV_VARS_TO_PROPAGATE if key in os.environ})
    return env


def inherits_tune_env() -> bool:
    """Whether trial workers of the current Ray already get Ray Tune's env_vars."""
    import ray

    if _local is None or not ray.is_initialized():
        return False
    node_id, environment = _local
    if ray.get_runtime_context().get_node_id() != node_id:
        return False  # another Ray than the one raysweep started
    wanted = tune_actor_env()
    return wanted is not None and all(environment.get(k) == v for k, v in wanted.items())


def _cache_class() -> Any:
    try:
        from ray.tune.execution.class_cache import _ActorClassCache
    except ImportError:
        return None
    return _ActorClassCache
