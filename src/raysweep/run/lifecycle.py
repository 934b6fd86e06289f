"""A run's life under its lock, shared by the Ray driver and the in-process one (no Ray here).

Lock, log, and the state.json status at each end: ``running`` when it starts,
``completed``/``failed`` with the exit code when it ends, ``interrupted`` (exit 130,
resumable) on a signal, ``failed`` with the error on anything else.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any

from raysweep.errors import INTERRUPTED
from raysweep.output_log import RunLog
from raysweep.results.records import SweepResult
from raysweep.run.lock import RunLock
from raysweep.run.signals import GracefulStop
from raysweep.rundir import RunDir

if TYPE_CHECKING:
    from raysweep.config.schema import SweepSpec
    from raysweep.gpu.allocation import GPUPlan
    from raysweep.search.points import WarmStart


def drive_locked(
    run_dir: RunDir, out: IO[str], stop: GracefulStop, body: Callable[[RunLog], SweepResult]
) -> int:
    """Run ``body`` under the run's lock and log; returns 0 ok, 1 failed, 130 interrupted.

    A remote run's lock and logs are in its staging directory; the logs are
    uploaded while it runs (``RunDir.synced``).
    """
    from raysweep.report.text import format_summary

    run_dir.path.mkdir(parents=True, exist_ok=True)  # a remote run's staging directory
    with (
        RunLock(run_dir.lock_path, str(run_dir)) as lock,
        run_dir.synced(),
        RunLog(run_dir.log_path, out) as log,
    ):
        if lock.stale_pid:
            log.print(f"warning: took over a stale lock left by dead pid {lock.stale_pid}")
        try:
            result = body(log)
        except KeyboardInterrupt:
            name = stop.signal_name if stop.received else "SIGINT"
            run_dir.mark("interrupted", exit_code=INTERRUPTED, signal=name)
            log.print(f"interrupted by {name}: state saved; continue with: sweep resume {run_dir}")
            return INTERRUPTED
        except BaseException as exc:
            run_dir.mark("failed", error=f"{type(exc).__name__}: {exc}")
            raise
        code = 0 if result.succeeded else 1
        run_dir.mark("completed" if code == 0 else "failed", exit_code=code)
        log.print("")
        log.print(format_summary(result))
        if not result.trials:  # exit 1: a night with nothing to show is a failed night
            log.print("No trial started before the run ended: a stop.time_budget_s shorter "
                      "than a trial's start-up ends a run so")  # fmt: skip
        log.print(f"Results: {run_dir}")
        return code


def start_run(
    run_dir: RunDir,
    spec: SweepSpec,
    gpu_plan: GPUPlan,
    record: SweepSpec | None = None,
    warm_start: WarmStart | None = None,
    record_warm_start: bool = False,
    packing: dict[str, Any] | None = None,
) -> None:
    """Mark the run ``running``: spec.json (when ``record``), warm start, repro.json."""
    from raysweep.repro.manifest import write_manifest

    if record is not None:
        run_dir.write_spec(record)
    run_dir.mark("running")
    if record_warm_start and warm_start is not None:
        run_dir.write_warm_start(warm_start.to_json())
    if record is not None or not run_dir.has_manifest():
        write_manifest(run_dir, record or spec, gpu_plan, packing)
