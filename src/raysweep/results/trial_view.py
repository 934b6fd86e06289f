"""A trial as an engine hands it over: what collect and the live progress read.

Each engine turns its own trial objects into these (the Ray engine in
``engines/ray/trial_view.py``, the local engine in ``LocalTrial.view``), so nothing
outside an engine reads an engine's trial type.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from raysweep.results.records import TrialStatus

INDEX_KEY = "__trial_index__"  # the config key of a trial's suggestion index (search/indexed.py)
NO_ERROR_TEXT = "trial failed (no error text was kept)"  # a failed trial's, when none was kept

# Where a trial is: waiting (or paused), running, ended by itself or its scheduler, failed
TrialState = Literal["pending", "running", "ended", "errored"]


@dataclass(frozen=True)
class TrialView:
    """One trial as far as the engine knows it now.

    ``metric_analysis``: per reported number, its ``min``, ``max`` and ``last`` over the
    trial's rows. ``outcome``: the engine's own verdict on an ended trial (``completed``,
    ``stopped`` or ``errored``), None where the engine leaves it to trial_info.jsonl
    (a Ray trial that returned and one its scheduler stopped both just end).
    ``error``: the error text of a failed trial.
    """

    trial_id: str
    config: Mapping[str, Any]  # as suggested, with the trial index (``__trial_index__``)
    state: TrialState
    last_result: Mapping[str, Any] = field(default_factory=dict)
    metric_analysis: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    outcome: TrialStatus | None = None
    error: str | None = None

    @property
    def index(self) -> int | None:
        """The suggestion index (None when the config carries none)."""
        value = self.config.get(INDEX_KEY)
        return int(value) if isinstance(value, int) and not isinstance(value, bool) else None

    @property
    def params(self) -> dict[str, Any]:
        """The hyperparameters (the config without the trial index)."""
        return {k: v for k, v in self.config.items() if k != INDEX_KEY}

    @property
    def iterations(self) -> int:
        """Iterations reported (``training_iteration`` of the last row)."""
        return int(self.last_result.get("training_iteration") or 0)

    def best_value(self, metric: str, mode: str) -> Any:
        """The best value of ``metric`` over the trial's rows, else its last one."""
        value = self.metric_analysis.get(metric, {}).get(mode)
        return self.last_result.get(metric) if value is None else value


def read_error_text(*paths: str | None) -> str:
    """A failed trial's error text: the first of ``paths`` that can be read, else
    :data:`NO_ERROR_TEXT`."""
    for path in paths:
        if path and Path(path).is_file():
            try:
                return Path(path).read_text(encoding="utf-8", errors="replace").strip()
            except OSError:
                continue
    return NO_ERROR_TEXT
