"""A run's GPU plan: ``--gpus`` resolved against the spec's resources and NVML's inventory."""

from __future__ import annotations

from raysweep.config.schema import SweepSpec
from raysweep.errors import ConfigError
from raysweep.gpu.allocation import GPUPlan, parse_gpus_flag, resolve_gpus
from raysweep.gpu.inventory import Inventory, read_inventory
from raysweep.gpu.sharing import check_requested_mps, decide_sharing
from raysweep.rundir import RunDir

PROBE_ITERATIONS = 3  # gpus_per_trial "auto": the probe trial runs at most this many
PROBE_SECONDS = 30.0  # ... or this long

_NO_INVENTORY = Inventory(gpus=(), driver_version=None, cuda_version=None, error=None)


def plan_gpus(
    spec: SweepSpec, gpus: str | None, allow_cpu: bool = False, on_cluster: bool = False
) -> GPUPlan:
    """Resolve ``--gpus`` and ``resources.gpu_sharing`` (GPUError / ConfigError when impossible).

    ``gpus_per_trial: "auto"`` (not yet probed) needs local GPUs, so not a cluster
    (``on_cluster``: ``--address``); there the cluster's GPUs are the cluster's.
    """
    resources = spec.resources
    sharing = resources.gpu_sharing
    check_requested_mps(sharing, resources.gpus_requested, on_cluster)  # before --allow-cpu's
    if resources.gpus_auto and on_cluster:
        raise ConfigError(
            "resources.gpus_per_trial=auto: the packing is probed on this machine's GPUs, "
            "which --address does not use; set resources.gpus_per_trial to a number "
            "(e.g. 0.25) to run on a cluster"
        )
    if on_cluster:
        plan = resolve_gpus(parse_gpus_flag("none"), _NO_INVENTORY, 0.0, allow_cpu=True)
        return decide_sharing(plan, sharing, resources.gpus_requested, on_cluster)
    selection = parse_gpus_flag(gpus)
    needs_inventory = selection.mode != "none" and (
        selection.mode != "unset" or resources.gpus_auto or resources.gpus_per_trial > 0
    )
    inventory = read_inventory() if needs_inventory else _NO_INVENTORY
    plan = resolve_gpus(selection, inventory, resources.gpus_requested, allow_cpu)
    return decide_sharing(plan, sharing, resources.gpus_requested, on_cluster)


def probe_iterations(spec: SweepSpec) -> int:
    """Iterations the ``gpus_per_trial: "auto"`` probe trial runs at most."""
    return min(PROBE_ITERATIONS, spec.iteration_budget or PROBE_ITERATIONS)


def recorded_spec(spec: SweepSpec, run_dir: RunDir) -> SweepSpec:
    """``spec`` with "auto" replaced by the run's recorded packing, when it has one."""
    record = run_dir.read_packing() if spec.resources.gpus_auto else None
    return spec if record is None else spec.with_gpus_per_trial(float(record["gpus_per_trial"]))
