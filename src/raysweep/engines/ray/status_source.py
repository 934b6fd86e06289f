"""What `sweep status` reads of an unfinished Ray run: its experiments' snapshots (no Ray)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from raysweep.rundir import RunDir

_RAY_STATUS = {
    "TERMINATED": "finished",
    "ERROR": "errored",
    "RUNNING": "unfinished",
    "PAUSED": "unfinished",
    "PENDING": "pending",
}


class SnapshotSource:
    """Trials by their state in Ray Tune's newest experiment snapshot of each part."""

    label = "snapshot"

    def holds(self, run_dir: RunDir) -> bool:
        """Any run directory: one without a snapshot yet has no trials to count."""
        return True

    def counts(self, run_dir: RunDir, state: dict[str, Any]) -> dict[str, int]:
        counts: dict[str, int] = {}
        for part in run_dir.parts(state):
            if not run_dir.has_experiment(part):
                continue
            for trial in run_dir.trial_states(part):
                name = _RAY_STATUS.get(trial["status"], str(trial["status"]).lower())
                counts[name] = counts.get(name, 0) + 1
        return counts


if TYPE_CHECKING:  # the class implements the seam (checked by mypy)
    from raysweep.engines.base import TrialSource

    _IMPLEMENTS: type[TrialSource] = SnapshotSource
