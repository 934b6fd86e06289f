"""Join a Ray cluster before anything is written, and refuse one that cannot run the sweep.

A driver must run the cluster's Ray and Python (Ray refuses the connection
otherwise, with a traceback and after raysweep created the run directory), and
every node must be able to import the trainable (else each trial errors with
``No module named ...``). Both are found out here, by joining the cluster with
the run's own runtime environment before the run directory exists: a problem
exits 2 naming it and the fix, with nothing written and no Ray started here.
The connection made here is the one the run then uses (``ray_session``).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass

from raysweep._raycompat.startup_check import RAY_TESTED, version_tested
from raysweep.config.schema import SweepSpec
from raysweep.engines.ray.ray_session import RayInfo, RayOptions, join_cluster
from raysweep.engines.ray.shipping import Shipment, check_import_on_nodes
from raysweep.errors import ConfigError
from raysweep.trainables.builtins import BUILTIN_TRAINABLES

# Ray's own refusal (ray._private.utils.check_version_info), read for the two versions.
_MISMATCH = re.compile(
    r"Version mismatch: The cluster was started with:\s+Ray: (?P<ray>\S+)\s+"
    r"Python: (?P<python>\S+)"
)


class ClusterVersionError(ConfigError):
    """The cluster runs another Ray or Python than this driver (exit 2, nothing written)."""


@dataclass(frozen=True)
class Versions:
    """A Ray and a Python version, as Ray compares them."""

    ray: str
    python: str

    @staticmethod
    def here() -> Versions:
        import ray

        return Versions(ray.__version__, ".".join(map(str, sys.version_info[:3])))


def preflight_cluster(spec: SweepSpec, options: RayOptions, shipment: Shipment) -> RayInfo:
    """Join the cluster at ``options.address`` and check it can run ``spec``.

    ``options`` carries ``shipment`` (engines/ray/shipping.py) in its runtime environment.
    Raises ClusterVersionError (another Ray or Python) or ConfigError (a node
    cannot import the trainable); the connection stays open for the run.
    """
    # Inside a Ray Job the probe inherits the job's runtime environment (its working
    # directory), as the trials do: no runtime_env of its own.
    with _back_into_job_directory(shipment.in_job):
        info = _join_same_versions(options)
        if spec.trainable not in BUILTIN_TRAINABLES:
            check_import_on_nodes(spec.trainable, shipment)
    return info


def _join_same_versions(options: RayOptions) -> RayInfo:
    """Join the cluster; ClusterVersionError when it runs another Ray or Python."""
    here = Versions.here()
    try:
        info = join_cluster(options)
    except RuntimeError as exc:
        found = _MISMATCH.search(str(exc))
        if found is None:
            raise
        cluster = Versions(found["ray"], found["python"])
        raise ClusterVersionError(mismatch_message(options.address, cluster, here)) from None
    served = _cluster_versions()
    if served is not None and served.ray != here.ray:  # Ray Client checks only Python
        raise ClusterVersionError(mismatch_message(options.address, served, here))
    return info


@contextmanager
def _back_into_job_directory(in_job: bool) -> Iterator[None]:
    """Inside a Ray Job, re-enter the job's working directory by its path afterwards.

    A node that sets up the job's working directory for the first time unpacks it
    afresh, removing what is at its path (Ray's working_dir plugin, ``overwrite=True``),
    and Ray sets it up on every node once the job's driver connects. Nodes that share
    a temporary directory (two nodes on one machine, as on the loopback test cluster)
    share that path: the worker node removed the head's copy under the job's driver,
    whose next ``os.getcwd()`` failed with FileNotFoundError (the first job on a fresh
    loopback cluster, 3 of 3). Once the import check has run on every node, each has
    unpacked the copy, so entering the path again finds the one that stays.
    """
    here = os.getcwd() if in_job else None
    try:
        yield
    finally:
        if here is not None:
            with suppress(OSError):
                os.chdir(here)


def mismatch_message(address: str | None, cluster: Versions, here: Versions) -> str:
    """What differs, and the install line (or the cluster change) that fixes it."""
    lines = [
        f"the Ray cluster at {address} runs Ray {cluster.ray} on Python {cluster.python}; "
        f"this driver runs Ray {here.ray} on Python {here.python}. A driver must run the "
        "cluster's Ray and Python."
    ]
    if cluster.ray != here.ray:
        tested = (
            f"raysweep supports ray{RAY_TESTED}"
            if version_tested(cluster.ray)
            else f"Ray {cluster.ray} is outside ray{RAY_TESTED}, the range raysweep is tested "
            "with: raysweep warns and runs if Ray's internals it uses are all there"
        )
        lines.append(
            f"Install the cluster's Ray here ({tested}):\n"
            f"  pip install 'raysweep[...]' 'ray[tune,default]=={cluster.ray}'\n"
            "(with the extras you use in [...]), or run the sweep on a cluster whose image "
            f"has Ray {here.ray}."
        )
    if cluster.python != here.python:
        lines.append(
            f"Run the driver with Python {cluster.python} (a virtual environment made with "
            f"python{'.'.join(cluster.python.split('.')[:2])}), or use a cluster image with "
            f"Python {here.python}."
        )
    lines.append("Nothing was started or written (docs/cluster.md, 'The cluster's Ray').")
    return "\n".join(lines)


def _cluster_versions() -> Versions | None:
    """A Ray Client connection's server versions (None on a direct connection).

    A direct connection was already checked by Ray when it connected; Ray Client
    compares only the Python minor version and its protocol.
    """
    import ray

    if not ray.util.client.ray.is_connected():
        return None
    remote = ray.remote(num_cpus=0)(Versions.here)
    found: Versions = ray.get(remote.remote(), timeout=120)
    return found
