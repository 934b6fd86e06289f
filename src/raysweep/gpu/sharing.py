"""``resources.gpu_sharing``: decided when the GPU plan is made, applied while the run drives.

"time-slice" is CUDA's default and raysweep's before MPS (the torch memory guard,
``gpu/guard.py``, stays on for it). "mps" and "auto" ask for NVIDIA MPS
(``gpu/mps.py``): "mps" where MPS cannot run here is invalid input (exit 2, naming
why, before the run directory is touched); "auto" falls back to time-slicing with a
one-line note. Trials on no GPU share nothing: "auto" then says nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager

from raysweep.errors import ConfigError, GPUError
from raysweep.gpu.allocation import GPUPlan
from raysweep.gpu.mps import find_control_binary, mps_status
from raysweep.rundir import RunDir

TIME_SLICE, MPS, AUTO = "time-slice", "mps", "auto"


def mps_refusal(requested: str, gpus_per_trial: float | str, on_cluster: bool) -> str | None:
    """Why MPS cannot serve this run, before any GPU is looked at (None: look further)."""
    if requested == TIME_SLICE:
        return None
    if on_cluster:
        return "--address runs trials on a cluster's nodes, whose MPS raysweep does not manage"
    if gpus_per_trial == 0:
        return "resources.gpus_per_trial is 0"
    return None


def refuse_mps(reason: str) -> ConfigError:
    """The exit-2 error of an explicit ``"mps"`` that cannot run here."""
    return ConfigError(
        f"resources.gpu_sharing: 'mps' is not available: {reason}; use 'auto' (MPS where "
        "available, else time-slicing) or 'time-slice'"
    )


def check_requested_mps(requested: str, gpus_per_trial: float | str, on_cluster: bool) -> None:
    """ConfigError naming why, for an explicit ``"mps"`` on a machine without usable MPS.

    Run before the GPUs are resolved, so the user learns about MPS, not about --allow-cpu.
    """
    if requested != MPS:
        return
    reason = mps_refusal(requested, gpus_per_trial, on_cluster) or mps_status().reason
    if reason is not None:
        raise refuse_mps(reason)


def decide_sharing(
    plan: GPUPlan, requested: str, gpus_per_trial: float | str, on_cluster: bool
) -> GPUPlan:
    """``plan`` with the sharing this run uses (ConfigError for an explicit, impossible "mps")."""
    plan = dataclasses.replace(plan, sharing_requested=requested)
    if requested == TIME_SLICE:
        return plan
    reason = mps_refusal(requested, gpus_per_trial, on_cluster)
    if reason is None:
        if plan.cpu_fallback or not plan.physical_ids:
            reason = "no GPU is used (trials run on CPUs)"
        else:
            reason = mps_status(plan.physical_ids).reason
    if reason is None:
        return dataclasses.replace(plan, gpu_sharing=MPS)
    if requested == MPS:
        raise refuse_mps(reason)
    quiet = gpus_per_trial == 0  # nothing to share: "auto" needs no note
    note = None if quiet else f"note: GPU sharing: time-slicing (MPS not available: {reason})"
    return dataclasses.replace(plan, sharing_note=note)


@contextmanager
def gpu_sharing(run_dir: RunDir, plan: GPUPlan, say: Callable[[str], None]) -> Iterator[str]:
    """While a run drives its trials: its MPS daemon (``plan.gpu_sharing == "mps"``) or nothing.

    Yields the sharing in use. Enter before Ray starts (its workers inherit the pipe
    directory); leave after Ray has stopped. A daemon an earlier, killed driver of
    this run left running is stopped first, whatever this invocation uses.
    ``"auto"`` falls back to time-slicing with a note when the daemon does not start.
    """
    from raysweep.gpu.mps_daemon import cleanup_stale, mps_sharing

    stale = cleanup_stale(run_dir)
    if stale is not None:
        say(f"note: stopped a stale MPS daemon (pid {stale}) left by an earlier driver of this run")
    if plan.sharing_note:
        say(plan.sharing_note)
    binary = find_control_binary() if plan.gpu_sharing == MPS else None
    used = TIME_SLICE
    with ExitStack() as stack:
        if binary is not None:
            try:
                stack.enter_context(mps_sharing(run_dir, binary, plan.physical_ids[0], say))
                used = MPS
            except GPUError as exc:
                if plan.sharing_requested == MPS:
                    raise
                why = str(exc).removeprefix("resources.gpu_sharing: ")
                say(f"note: GPU sharing: time-slicing (MPS not used: {why})")
        yield used
