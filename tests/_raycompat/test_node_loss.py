"""A lost node is told apart from a failure of the trial's own code (_raycompat/node_loss.py).

The retry itself, on a real two-node cluster whose worker is killed with
SIGKILL, is tests/e2e/test_cluster_node_loss.py.
"""

from __future__ import annotations

import pytest

from raysweep._raycompat.node_loss import NODE_LOSS_TARGETS, lost_node
from raysweep._raycompat.startup_check import Target, problem


@pytest.mark.parametrize("target", NODE_LOSS_TARGETS, ids=lambda t: t.name)
def test_every_node_loss_target_resolves_on_the_pinned_ray(target: Target) -> None:
    assert problem(target) is None


def test_ray_saying_the_node_died_is_a_node_loss() -> None:
    from ray.exceptions import RayActorError

    text = (
        "The actor died unexpectedly before finishing this task.\n\tclass_name: ImplicitFunc\n"
        "The actor is dead because its node has died. Node Id: 9e84284dec925ae4638da912"
    )
    assert lost_node(RayActorError(error_msg=text)) == "9e84284dec925ae4638da912"


def test_an_error_in_the_users_code_or_an_unknown_actor_is_not() -> None:
    from ray.exceptions import RayActorError

    assert lost_node(ValueError("bad config")) is None
    assert lost_node(RayActorError(error_msg="The actor died: worker process has died")) is None
