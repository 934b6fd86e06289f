"""The next trial to start, chosen in O(1) amortised instead of O(trials so far).

Ray Tune's ``FIFOScheduler.choose_trial_to_run`` (also used by ASHA and the median
stopping rule) scans every trial of the experiment at every controller step for
the first PENDING one. In a sweep of thousands of short trials that scan is what
makes the driver slower as results accumulate. The choice here is the same (the
first PENDING trial in creation order, else the first PAUSED one), but the scan
starts after the leading run of TERMINATED trials, which never run again.
"""

from __future__ import annotations

from typing import Any

from ray.tune.experiment import Trial


class NextTrialCursor:
    """Mixin for FIFO-based Ray Tune schedulers: skip the finished prefix of the trial list."""

    _cursor_list_id: int | None = None
    _cursor: int = 0

    def choose_trial_to_run(self, tune_controller: Any) -> Trial | None:
        """Ray's FIFO choice: first PENDING trial in creation order, else first PAUSED."""
        trials = tune_controller.get_trials()
        if id(trials) != self._cursor_list_id or self._cursor > len(trials):
            self._cursor_list_id, self._cursor = id(trials), 0  # a new or restored controller
        start = self._cursor
        while start < len(trials) and trials[start].status == Trial.TERMINATED:
            start += 1
        self._cursor = start
        paused: Trial | None = None
        for i in range(start, len(trials)):  # islice(trials, start) would step over the prefix
            trial = trials[i]
            if trial.status == Trial.PENDING:
                return trial
            if paused is None and trial.status == Trial.PAUSED:
                paused = trial
        return paused
