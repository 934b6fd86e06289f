"""A trial whose node died is retried from its checkpoint without using up ``max_failures``.

When a node dies (a preempted spot machine, an out-of-memory kill), Ray Tune
sees the trial's actor die and passes the error to ``Trial.handle_error``,
which counts it as one of the trial's failures, like an exception in the
user's code; with ``max_failures: 0`` (the default) the trial then ends
``errored`` after whatever iterations it had done, and the sweep is one trial
short (measured on a two-node loopback cluster: 1 of 6 trials lost, exit 0).
Ray already leaves a preempted node uncounted (``RayActorError.preempted``,
set only when the autoscaler drained the node); a node that simply died is
not (ray-project/ray#50187).

Inside :func:`retry_lost_nodes` a trial whose actor died with its node is not
counted: ``should_recover()`` holds, Ray Tune requeues it and it continues
from its last checkpoint on a node that is alive. ``max_failures`` stays for
errors in the user's code. Each loss is handed to ``on_loss`` (trial, node id)
so the driver can name it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from raysweep._raycompat.startup_check import Target

# What this module patches and reads; to join targets.TARGETS (checked at start-up).
NODE_LOSS_TARGETS: tuple[Target, ...] = (
    Target(
        "ray.tune.experiment.trial", "Trial.handle_error", "callable", ("self", "exc"), "node_loss"
    ),
    Target("ray._private.state", "actors", "callable", ("actor_id",), "node_loss"),
)
# Ray's text for an actor whose node died (the GCS's ActorDiedErrorContext).
_NODE_DIED = re.compile(r"its node has died\.?\s*Node Id: ([0-9a-f]+)", re.IGNORECASE)
# An actor on a SIGKILLed node first fails as "temporarily unavailable" (its RPC
# socket closed); the GCS declares the node dead after its health checks miss
# (seconds, up to ~30 s). That long is waited for before calling it the user's failure;
# on a cluster of several nodes, an actor reported unavailable on a node that stays
# alive costs that wait once before it counts against max_failures.
NODE_DEATH_GRACE_S = 60.0

_losses: dict[str, str] = {}  # trial id -> id of the node it was lost with, until collected


def lost_node(exc: Any, grace_s: float = NODE_DEATH_GRACE_S) -> str | None:
    """The id of the node whose death ``exc`` reports (None: another failure).

    A RayActorError is a node loss when Ray says so, or when the node the actor
    ran on is (or, for an actor reported unavailable, becomes within
    ``grace_s``) dead in the GCS. An exception raised by the user's code arrives
    as a RayTaskError and is never a node loss.
    """
    from ray.exceptions import ActorUnavailableError, RayActorError, RayTaskError

    if isinstance(exc, RayTaskError):
        cause = exc.as_instanceof_cause()
        exc = cause if isinstance(cause, RayActorError) else exc
    if not isinstance(exc, RayActorError):
        return None
    found = _NODE_DIED.search(str(exc))
    if found:
        return found.group(1)
    node = _actor_node(getattr(exc, "actor_id", None))
    if node is None:
        return None
    waits = isinstance(exc, ActorUnavailableError)
    deadline = time.monotonic() + (grace_s if waits else 0.0)
    while True:
        if not _node_alive(node):
            return node
        # Not the actor's state: on a SIGKILLed node the GCS marks the actor DEAD
        # before the node (seen on the loopback cluster), so only the node decides.
        if time.monotonic() >= deadline or _single_node():
            return None
        time.sleep(0.5)


def _actor_node(actor_id: str | None) -> str | None:
    """The node the actor ran on, from the GCS's actor table (None: not known)."""
    if not actor_id:
        return None
    from ray._private import state

    try:
        info = state.actors(actor_id) or {}
    except Exception:  # the GCS did not answer: not known
        return None
    node = info.get("Address", {}).get("NodeID")
    return str(node) if node else None


def _node_alive(node: str) -> bool:
    import ray

    return any(n.get("NodeID") == node and n.get("Alive") for n in ray.nodes())


def _single_node() -> bool:
    """A one-node Ray (a local run): losing its node would have lost the driver too."""
    import ray

    return len(ray.nodes()) < 2


def take_loss(trial_id: str) -> str | None:
    """The node a trial was just lost with, once (None: it was not)."""
    return _losses.pop(trial_id, None)


@contextmanager
def retry_lost_nodes(on_loss: Callable[[Any, str], None] | None = None) -> Iterator[None]:
    """While the block runs, a trial lost with its node is retried and not counted as failed."""
    from ray.tune.experiment.trial import Trial

    original = Trial.handle_error
    if getattr(original, "_raysweep", False):
        yield
        return

    def handle_error(self: Any, exc: Any = None) -> None:
        node = lost_node(exc)
        if node is None:
            original(self, exc)
            return
        # Not the trial's failure: no count, its checkpoint kept (a failed restore
        # would otherwise drop it), and no error file for a trial that goes on.
        _losses[self.trial_id] = node
        if on_loss is not None:
            on_loss(self, node)

    handle_error._raysweep = True  # type: ignore[attr-defined]
    Trial.handle_error = handle_error  # type: ignore[method-assign]
    try:
        yield
    finally:
        Trial.handle_error = original  # type: ignore[method-assign]
        _losses.clear()
