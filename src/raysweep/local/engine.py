"""The local engine: a sweep's trials in this process, without Ray (``"execution": "local"``).

Registered in ``engines.registry``. Its command-line checks (no cluster, a
local run directory) and the notes on flags it ignores live here, with it.
"""

from __future__ import annotations

from typing import IO, TYPE_CHECKING

from raysweep.errors import ConfigError
from raysweep.gpu.planning import plan_gpus
from raysweep.run.resume_spec import resumed_spec
from raysweep.search.points import WarmStart
from raysweep.storage import is_uri

if TYPE_CHECKING:
    from raysweep.config.schema import SweepSpec
    from raysweep.engines.base import EngineOptions, NewRun
    from raysweep.run.signals import GracefulStop
    from raysweep.rundir import RunDir


class LocalEngine:
    """A controller (searcher, scheduler, stop rules, failures) over a thread backend."""

    name = "local"

    def check_options(self, spec: SweepSpec, options: EngineOptions) -> None:
        """ConfigError for flags an in-process run cannot honour."""
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

    def prepare(self, spec: SweepSpec, run: RunDir, options: EngineOptions, out: IO[str]) -> None:
        """The Ray Tune names the local engine uses (its searchers and schedulers are Ray
        Tune's) against the installed Ray; the GBM library is checked with the spec."""
        check_local_ray(out)

    def run(
        self,
        spec: SweepSpec,
        run: RunDir,
        new: NewRun,
        options: EngineOptions,
        out: IO[str],
        stop: GracefulStop,
    ) -> int:
        from raysweep.local.drive import LocalOptions, drive_local

        warm = new.warm_start
        local = LocalOptions(new.gpu_plan, spec, warm, warm is not None, self.notes(options))
        return drive_local(spec, run, local, out, stop)

    def resume(
        self,
        run: RunDir,
        stored: SweepSpec,
        spec: SweepSpec,
        options: EngineOptions,
        out: IO[str],
        stop: GracefulStop,
    ) -> int:
        """Continue from the journal (finished trials kept, the rest run)."""
        self.check_options(spec, options)
        state = run.read_state()
        extended = spec.search.num_samples != stored.search.num_samples
        if state.get("status") == "completed" and not extended:
            print(f"{run}: complete ({spec.total_trials} trials); nothing to resume", file=out)
            return 0
        if options.dry_run:
            print(f"dry run: would resume {run} in-process from {run.journal_path.name}", file=out)
            return 0
        check_local_ray(out)
        from raysweep.local.drive import LocalOptions, drive_local

        recorded_warm = run.read_warm_start(dict(state))
        local = LocalOptions(
            plan_gpus(spec, None, options.allow_cpu, False),
            record=resumed_spec(run, stored, None, spec.search.num_samples, None)
            if extended
            else None,
            warm_start=WarmStart.from_json(recorded_warm) if recorded_warm else None,
            notes=self.notes(options),
        )
        return drive_local(spec, run, local, out, stop)


def check_local_ray(out: IO[str]) -> None:
    """RayCompatError (exit 2) when a Ray Tune name the local engine uses does not match."""
    from raysweep._raycompat import check_ray

    for warning in check_ray("local"):
        print(warning, file=out)


if TYPE_CHECKING:  # the class implements the seam (checked by mypy)
    from raysweep.engines.base import Engine

    _IMPLEMENTS: type[Engine] = LocalEngine
