"""The local engine: a sweep's trials in this process, without Ray (``"execution": "local"``).

Registered in ``engines.registry``. What it can run (``capabilities.py``), its
command-line checks (no cluster, a local run directory) and the notes on flags it
ignores live with it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import IO, TYPE_CHECKING, Any

from raysweep.engines.local.capabilities import check_runnable
from raysweep.errors import ConfigError
from raysweep.gpu.planning import plan_gpus
from raysweep.storage import is_uri

if TYPE_CHECKING:
    from raysweep.config.schema import SweepSpec
    from raysweep.engines.base import EngineOptions, NewRun, ResumePlan
    from raysweep.run.signals import GracefulStop
    from raysweep.rundir import RunDir


class LocalEngine:
    """A controller (searcher, scheduler, stop rules, failures) over a thread backend."""

    name = "local"

    def check_options(self, spec: SweepSpec, options: EngineOptions) -> None:
        """ConfigError for a spec or flags an in-process run cannot honour."""
        check_runnable(spec)
        if options.address:
            raise ConfigError(
                f'--address {options.address}: "execution": "local" runs the trials '
                'in this process, on this machine; set "execution": "ray" to use a Ray cluster'
            )
        if is_uri(options.storage):
            raise ConfigError(
                f'--storage {options.storage}: "execution": "local" keeps its run directory '
                'on a local filesystem; give a directory, or set "execution": "ray"'
            )

    def notes(self, options: EngineOptions) -> tuple[str, ...]:
        """What the flags that only a Ray run uses do in a local run: nothing, said once."""
        notes = []
        if options.gpus:
            notes.append(f"--gpus {options.gpus} ignored: in-process trials run on CPUs")
        if options.dashboard is not False:
            notes.append(
                "no Ray dashboard in-process; `sweep status RUN_DIR --watch` follows the run"
            )
        if options.retry_errored:
            notes.append("--retry-errored ignored: an in-process run keeps its errored trials")
        return tuple(notes)

    def plan_lines(self, spec: SweepSpec) -> list[str]:
        return ["execution: local (trials in this process, no Ray)"]

    def prepare(
        self, spec: SweepSpec, run_dir: RunDir, options: EngineOptions, out: IO[str]
    ) -> None:
        """The Ray Tune names the local engine uses (its searchers and schedulers are Ray
        Tune's) against the installed Ray; the GBM library is checked with the spec."""
        check_local_ray(out)

    def run(
        self,
        spec: SweepSpec,
        run_dir: RunDir,
        new: NewRun,
        options: EngineOptions,
        out: IO[str],
        stop: GracefulStop,
    ) -> int:
        from raysweep.engines.local.drive import LocalOptions, drive_local

        warm = new.warm_start
        local = LocalOptions(new.gpu_plan, spec, warm, warm is not None, self.notes(options))
        return drive_local(spec, run_dir, local, out, stop)

    def plan_resume(
        self,
        run_dir: RunDir,
        stored: SweepSpec,
        state: dict[str, Any],
        plan: ResumePlan,
        options: EngineOptions,
    ) -> ResumePlan:
        """Continue from the journal (finished trials kept, the rest run)."""
        extended = plan.spec.search.num_samples != stored.search.num_samples
        done = state.get("status") == "completed" and not extended
        steps = () if done else (f"in-process from {run_dir.journal_path.name}",)
        gpu_plan = plan_gpus(plan.spec, None, options.allow_cpu, False)
        return replace(plan, gpu_plan=gpu_plan, steps=steps)

    def resume(
        self, run_dir: RunDir, plan: ResumePlan, options: EngineOptions, out: IO[str],
        stop: GracefulStop,
    ) -> int:  # fmt: skip
        from raysweep.engines.local.drive import LocalOptions, drive_local

        assert plan.gpu_plan is not None, "plan_resume sets it"
        local = LocalOptions(plan.gpu_plan, plan.record, plan.warm_start, notes=self.notes(options))
        return drive_local(plan.spec, run_dir, local, out, stop)


def check_local_ray(out: IO[str]) -> None:
    """RayCompatError (exit 2) when a Ray Tune name the local engine uses does not match."""
    from raysweep._raycompat import check_ray

    for warning in check_ray("local"):
        print(warning, file=out)


if TYPE_CHECKING:  # the class implements the seam (checked by mypy)
    from raysweep.engines.base import Engine

    _IMPLEMENTS: type[Engine] = LocalEngine
