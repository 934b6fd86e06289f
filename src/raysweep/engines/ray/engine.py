"""The Ray engine: a sweep's trials run by Ray Tune (``"execution": "ray"``, the default).

Registered in ``engines.registry``. Importing this module does not import Ray:
``run``/``resume`` check the installed Ray (``_raycompat.check_ray``, exit 2 on a
mismatch) and import the driver when a run starts.
"""

from __future__ import annotations

from dataclasses import replace
from typing import IO, TYPE_CHECKING, Any

from raysweep.engines.ray.loggers import check_logging
from raysweep.engines.ray.phases import Phase, plan_phases, recorded_parts
from raysweep.gpu.planning import plan_gpus, recorded_spec
from raysweep.rundir import TUNE_DIR, Part, RunDir

if TYPE_CHECKING:
    from raysweep.config.schema import SweepSpec
    from raysweep.engines.base import EngineOptions, NewRun, ResumePlan
    from raysweep.engines.ray.ray_session import RayOptions
    from raysweep.run.signals import GracefulStop


class RayEngine:
    """Starts or joins Ray, builds one Tuner per phase, and restores interrupted ones."""

    name = "ray"

    def __init__(self) -> None:
        self._ray: RayOptions | None = None  # settled by prepare(): a cluster joined, code shipped

    def check_options(self, spec: SweepSpec, options: EngineOptions) -> None:
        """Every flag has a meaning with Ray; an explicit ``--dashboard`` needs its extra,
        and the spec's ``logging`` the loggers' libraries (ConfigError, nothing written)."""
        check_logging(spec)
        if options.dashboard:
            from raysweep.engines.ray.dashboard_extra import choose_dashboard

            choose_dashboard(True, options.address)  # ConfigError naming ray[default]

    def notes(self, options: EngineOptions) -> tuple[str, ...]:
        return ()

    def plan_lines(self, spec: SweepSpec) -> list[str]:
        return []

    def prepare(
        self, spec: SweepSpec, run_dir: RunDir, options: EngineOptions, out: IO[str]
    ) -> None:
        """The installed Ray against the tested range and the declared targets; on a
        cluster, join it and check it can run ``spec`` (``engines.ray.drive.preflight``)."""
        check_installed_ray(out)
        from raysweep.engines.ray.drive import preflight  # imports Ray: checked just now

        self._ray = preflight(spec, run_dir, ray_options(options))

    def run(
        self,
        spec: SweepSpec,
        run_dir: RunDir,
        new: NewRun,
        options: EngineOptions,
        out: IO[str],
        stop: GracefulStop,
    ) -> int:
        from raysweep.engines.ray.drive import DriveOptions, drive  # imports Ray: checked already

        first = Phase("fit", Part(TUNE_DIR, spec.total_trials, 0))
        drive_options = DriveOptions(
            self._ray or ray_options(options),
            new.gpu_plan,
            options.gpus,
            record=spec,
            warm_start=new.warm_start,
            record_warm_start=new.warm_start is not None,
        )
        return int(drive(spec, run_dir, [first], drive_options, out, stop))

    def plan_resume(
        self,
        run_dir: RunDir,
        stored: SweepSpec,
        state: dict[str, Any],
        plan: ResumePlan,
        options: EngineOptions,
    ) -> ResumePlan:
        """The phases left (restore, extend, retry) and the GPU plan ("auto" keeps the
        packing the run's probe chose; drive() applies it again, and logs it)."""
        parts = recorded_parts(run_dir, state, stored)
        phases = plan_phases(run_dir, parts, plan.spec, options.retry_errored)
        gpu_plan = plan_gpus(
            recorded_spec(plan.spec, run_dir),
            options.gpus,
            options.allow_cpu,
            bool(options.address),
        )
        steps = tuple(f"{p.kind} {p.part.dir}/ ({p.part.trials} trials)" for p in phases)
        if not steps and state.get("status") != "completed":
            steps = ("write outputs",)  # an unfinished run whose trials all ended
        return replace(plan, gpu_plan=gpu_plan, steps=steps, work=phases)

    def resume(
        self, run_dir: RunDir, plan: ResumePlan, options: EngineOptions, out: IO[str],
        stop: GracefulStop,
    ) -> int:  # fmt: skip
        from raysweep.engines.ray.drive import DriveOptions, drive  # imports Ray: prepare checked

        assert plan.gpu_plan is not None, "plan_resume sets it"
        drive_options = DriveOptions(
            self._ray or ray_options(options),
            plan.gpu_plan,
            options.gpus,
            record=plan.record,
            retry_errored=options.retry_errored,
            warm_start=plan.warm_start,
        )
        return int(drive(plan.spec, run_dir, plan.work, drive_options, out, stop))


def ray_options(options: EngineOptions) -> RayOptions:
    """The ``RayOptions`` of the command line's flags."""
    from raysweep.engines.ray.dashboard_extra import choose_dashboard
    from raysweep.engines.ray.ray_session import RayOptions

    dashboard = choose_dashboard(options.dashboard, options.address)
    return RayOptions(
        address=options.address,
        connect_timeout_s=options.connect_timeout_s,
        include_dashboard=dashboard.include,
        dashboard_note=dashboard.note,
        dashboard_host=options.dashboard_host,
        dashboard_port=options.dashboard_port,
        working_dir=str(options.working_dir.resolve()) if options.working_dir else None,
    )


def check_installed_ray(out: IO[str]) -> None:
    """Check the installed Ray before the driver (which imports it) is imported.

    RayCompatError (exit 2) on a mismatch; warnings go to ``out``. ``sweep validate``
    and the read-only commands never get here.
    """
    from raysweep._raycompat import check_ray

    for warning in check_ray():
        print(warning, file=out)


if TYPE_CHECKING:  # the class implements the seam (checked by mypy)
    from raysweep.engines.base import Engine

    _IMPLEMENTS: type[Engine] = RayEngine


class RayTrialRerun:
    """``sweep repro`` (engines.base.TrialRerun): the installed Ray checked before the
    rerun module (which imports Ray) is imported: ``engines/ray/rerun.py``."""

    def check(self, out: IO[str]) -> None:
        check_installed_ray(out)

    def rerun(self, run_dir: RunDir, trial_id: str | None, out: IO[str]) -> int:
        from raysweep.engines.ray.rerun import rerun_trial

        return rerun_trial(run_dir, trial_id, out)
