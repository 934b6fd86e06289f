"""Trial actors are not killed while they start just because a cached actor came free.

With ``reuse_actors``, Ray Tune's ``TuneController._maybe_reuse_cached_actor``
gives a staged trial a cached actor as soon as one is free and removes the
actor it had requested for that trial, even when that actor already holds its
resources and its worker process is starting. For trials shorter than a worker's
start-up (about 1.3 s of CPU on a 2-core VM) this never settles: every hand-over
stages the next trial with a new actor, the running trial's actor comes free
first, the new actor is killed while it starts, and its slot goes to the next
new actor. One slot runs every trial while the other starts and kills a Python
worker per hand-over: no-op trials ran at ~45/s instead of 100-150/s in most
runs measured, depending on which of the first two actors got ready first.

Here a trial whose own actor is already starting keeps it: it does not take
the cached actor, which goes to the next pending trial instead. An actor that
is only requested (no resources yet) is still replaced by a cached one, as Ray
Tune does, since cancelling the request costs nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from raysweep._raycompat.switch import perf_patch_applies


@contextmanager
def keep_starting_actors() -> Iterator[None]:
    """While the block runs, a trial whose actor is starting waits for it."""
    controller = _controller_class()
    original = getattr(controller, "_maybe_reuse_cached_actor", None)
    if not perf_patch_applies() or original is None or getattr(original, "_raysweep", False):
        yield
        return

    def reuse(self: Any, trial: Any) -> bool:
        if own_actor_is_starting(self, trial):
            return False
        return bool(original(self, trial))

    reuse._raysweep = True  # type: ignore[attr-defined]
    controller._maybe_reuse_cached_actor = reuse
    try:
        yield
    finally:
        controller._maybe_reuse_cached_actor = original


def own_actor_is_starting(controller: Any, trial: Any) -> bool:
    """Whether ``trial``'s own actor holds its resources but has not started yet."""
    try:
        if trial in controller._resetting_trials:
            return False  # it already took a cached actor
        actor = controller._trial_to_actor.get(trial)
        if actor is None:
            return False
        # The actor manager counts an actor as started once it has its resources and
        # its creation was submitted; the controller, once its __ray_ready__ resolved.
        submitted = bool(controller._actor_manager.is_actor_started(actor))
        return submitted and actor not in controller._started_actors
    except AttributeError:  # a Ray Tune without these internals: its own behaviour
        return False


def _controller_class() -> Any:
    try:
        from ray.tune.execution.tune_controller import TuneController
    except ImportError:
        return None
    return TuneController
