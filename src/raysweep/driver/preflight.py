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

import re
import sys
from dataclasses import dataclass

from raysweep._raycompat.targets import RAY_TESTED, version_tested
from raysweep.config.schema import SweepSpec
from raysweep.driver.ray_session import RayInfo, RayOptions, join_cluster
from raysweep.driver.shipping import Shipment, check_import_on_nodes
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

    ``options`` carries ``shipment`` (driver/shipping.py) in its runtime environment.
    Raises ClusterVersionError (another Ray or Python) or ConfigError (a node
    cannot import the trainable); the connection stays open for the run.
    """
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
    # Inside a Ray Job the trials import from the job's working directory. A task run
    # there before the trials once failed to fetch that directory's package from the
    # GCS (RuntimeEnvSetupError, two-node loopback cluster under load), so it is not
    # probed; the trials report a missing module as their error.
    if spec.trainable not in BUILTIN_TRAINABLES and not shipment.in_job:
        check_import_on_nodes(spec.trainable, shipment)
    return info


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
