"""The seam between the orchestrator and an engine: typed options in, an exit code out.

An engine runs a validated spec's trials into a run directory and returns
0 (done), 1 (failed) or 130 (interrupted, resumable); what it leaves behind
(state.json, trials.jsonl, results, reports) is raysweep's own format, written
through the run layer (``raysweep.run``), never a Ray object. Engine-specific
checks of the command line live on the engine (``check_options``, ``notes``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

from raysweep.engines.environment import DEFAULT_CONNECT_TIMEOUT_S

if TYPE_CHECKING:
    from raysweep.config.schema import SweepSpec
    from raysweep.gpu.allocation import GPUPlan
    from raysweep.run.signals import GracefulStop
    from raysweep.rundir import RunDir
    from raysweep.search.points import WarmStart


@dataclass(frozen=True)
class EngineOptions:
    """The command line's run-time choices, as every engine gets them (no config here)."""

    storage: str | os.PathLike[str] = "runs"
    gpus: str | None = None  # --gpus as given
    allow_cpu: bool = False
    address: str | None = None  # the Ray cluster to join (--address, else RAY_ADDRESS)
    connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S  # joining it gives up after this
    dashboard: bool | None = None  # --dashboard / --no-dashboard; None: on where Ray can
    dashboard_host: str = "127.0.0.1"
    dashboard_port: int | None = None
    working_dir: Path | None = None
    dry_run: bool = False
    retry_errored: bool = False
    warm_start: Path | None = None  # --warm-start as given (a resume keeps its own)


@dataclass(frozen=True)
class NewRun:
    """What the orchestrator settled for a new run before its directory exists."""

    gpu_plan: GPUPlan
    warm_start: WarmStart | None = None


@dataclass(frozen=True)
class ResumePlan:
    """What a resume continues, planned from the run directory before anything runs.

    The orchestrator settles ``spec``, ``record`` and ``warm_start`` for every engine;
    the engine's ``plan_resume`` adds its GPU plan, the ``steps`` it will take (empty:
    nothing is left to run) and its own ``work`` (the Ray engine's phases).
    """

    spec: SweepSpec  # the stored spec with the command line's overrides
    record: SweepSpec | None  # spec.json to record first (an extension), else None
    warm_start: WarmStart | None  # the starting points the run was started with
    gpu_plan: GPUPlan | None = None
    steps: tuple[str, ...] = ()
    work: Any = None


class Engine(Protocol):
    """Runs a sweep's trials; registered by name in ``engines.registry``."""

    name: str

    def check_options(self, spec: SweepSpec, options: EngineOptions) -> None:
        """ConfigError (exit 2, nothing written) for flags this engine cannot honour."""

    def notes(self, options: EngineOptions) -> tuple[str, ...]:
        """What the flags this engine ignores do here: nothing, said once in the log."""

    def plan_lines(self, spec: SweepSpec) -> list[str]:
        """Lines ``sweep run --dry-run`` adds for this engine."""

    def prepare(
        self, spec: SweepSpec, run_dir: RunDir, options: EngineOptions, out: IO[str]
    ) -> None:
        """Before ``run_dir`` exists: exit-2 error when what this engine runs on is unusable
        (the installed Ray, a cluster on another Ray, a node that cannot import the
        trainable); what it settles here is kept for :meth:`run`."""

    def run(
        self,
        spec: SweepSpec,
        run_dir: RunDir,
        new: NewRun,
        options: EngineOptions,
        out: IO[str],
        stop: GracefulStop,
    ) -> int:
        """Run a new sweep into the freshly created ``run_dir``; 0 ok, 1 failed, 130 interrupted."""

    def plan_resume(
        self,
        run_dir: RunDir,
        stored: SweepSpec,
        state: dict[str, Any],
        plan: ResumePlan,
        options: EngineOptions,
    ) -> ResumePlan:
        """``plan`` completed with what this engine continues (``stored``: spec.json;
        ``state``: state.json); reads the run directory only, runs and writes nothing."""

    def resume(
        self, run_dir: RunDir, plan: ResumePlan, options: EngineOptions, out: IO[str],
        stop: GracefulStop,
    ) -> int:  # fmt: skip
        """Continue or extend ``run_dir`` as planned, after :meth:`prepare`; 0/1/130."""


class TrialSource(Protocol):
    """Reads, without Ray, the trials a resume of an unfinished run will find.

    ``sweep status`` asks each registered source in turn; the first that
    ``holds`` the run gives the counts, labelled ``label``.
    """

    label: str

    def holds(self, run_dir: RunDir) -> bool: ...

    def counts(self, run_dir: RunDir, state: dict[str, Any]) -> dict[str, int]: ...


class TrialRerun(Protocol):
    """Reruns one recorded trial (``sweep repro``), whichever engine ran the sweep: the
    registry names the one that does (``engines/registry.py``)."""

    def check(self, out: IO[str]) -> None:
        """What must hold before the rerun is prepared (the installed Ray, say)."""
        ...

    def rerun(self, run_dir: RunDir, trial_id: str | None, out: IO[str]) -> int:
        """Rerun ``trial_id`` (None: the best) of ``run_dir``; 0 when its metric matches."""
        ...
