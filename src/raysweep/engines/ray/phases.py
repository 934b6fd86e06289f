"""What ``sweep resume`` / ``sweep run --resume`` will do, decided before anything is touched.

Everything here only reads the run directory: a refusal (changed config,
missing or corrupt ``tune/``) leaves every file as it was.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from raysweep.config.schema import SweepSpec
from raysweep.engines.ray.experiments import check_part, is_finished
from raysweep.errors import ResumeError
from raysweep.rundir import TUNE_DIR, Part, RunDir, extension_dir


@dataclass(frozen=True)
class Phase:
    """One Tuner to drive: a new experiment (``fit``) or an interrupted one (``restore``)."""

    kind: Literal["fit", "restore"]
    part: Part
    continued_from: str | None = None  # earlier experiment whose searcher a new one continues


def recorded_parts(run_dir: RunDir, state: dict[str, Any], stored: SweepSpec) -> list[Part]:
    """The run's experiments from state.json (or ``tune/`` alone for older run directories)."""
    if "experiments" in state:
        return run_dir.parts(state)
    if run_dir.has_experiment(TUNE_DIR):
        return [Part(TUNE_DIR, stored.total_trials, 0)]
    if state.get("status") == "completed" or run_dir.has_results():
        raise ResumeError(
            f"{run_dir.where(TUNE_DIR)} is missing: Ray Tune's experiment directory is gone. "
            "Nothing was changed."
        )
    return []


def plan_phases(
    run_dir: RunDir, parts: list[Part], spec: SweepSpec, retry_errored: bool
) -> list[Phase]:
    """Restore what is unfinished, then add an extension for any extra trials."""
    for part in parts:
        check_part(run_dir, part)
    phases: list[Phase] = []
    for i, part in enumerate(parts):
        previous = parts[i - 1].dir if i else None
        if not run_dir.has_snapshot(part):  # killed before Ray's first snapshot: start over
            phases.append(Phase("fit", part, previous))
        elif not is_finished(run_dir, part, retry_errored):
            phases.append(Phase("restore", part))
    have = sum(p.trials for p in parts)
    if not parts:
        phases.append(Phase("fit", Part(TUNE_DIR, spec.total_trials, 0)))
    elif spec.total_trials > have:
        extra = Part(extension_dir(len(parts)), spec.total_trials - have, start_index=have)
        phases.append(Phase("fit", extra, parts[-1].dir))
    return phases
