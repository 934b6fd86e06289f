"""The local engine's controller: every decision of an in-process sweep, over a trial backend.

``"execution": "local"`` runs the built-in GBM trainables without Ray: the same
searcher chain (``search.build.build_searcher``: trial indices, warm-start
points, strict batching) and scheduler (``schedulers.build.build_scheduler``: Ray Tune's
ASHA or median rule) are called in the order Ray Tune's controller calls them
(``schedulers.decider``), and each trial trains through the same ``fit_gbm``
with the same seed, data split and checkpoint segments as a Ray trial. The
controller decides (what to suggest, when a trial stops, the stop rules, what a
failure means); the backend (``local.backend``) runs the trials, as Syne Tune
splits its loop from its trial backend.

The scheduler's decision is taken in the trial's own thread at each report, under
one lock that also orders the journal (``local.journal``), so a resume replays the
searcher's and scheduler's calls in the order they were made.
"""

from __future__ import annotations

import os
import threading
import time
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ray.tune.schedulers import TrialScheduler
from ray.tune.search import Searcher

from raysweep.config.schema import SweepSpec
from raysweep.engines.local.backend import ThreadBackend
from raysweep.engines.local.journal import Journal
from raysweep.engines.local.trial import RUNNING, LocalTrial
from raysweep.engines.local.trial_info import TrialInfoLog
from raysweep.schedulers.build import TIME_ATTR
from raysweep.schedulers.decider import ControllerStandIn, Decider
from raysweep.trainables.builtins import Reporter
from raysweep.trainables.context import TrialContext
from raysweep.trainables.plan import constant_space, trial_plan

POLL_S = 0.1  # how often the loop looks at signals, the time budget and the display


class TrialStopped(Exception):
    """The scheduler or the stop rule ended the trial at a report."""


class SweepAborted(Exception):
    """The sweep is being interrupted: the trial stops without an end record."""


@dataclass
class Hooks:
    """What the loop tells the outside: trial starts and ends, and its idle turns."""

    started: Callable[[LocalTrial], None]
    ended: Callable[[LocalTrial], None]
    tick: Callable[[], None]
    interrupted: Callable[[], bool]


class LocalController:
    """Suggests, decides on and records trials until the sweep's trial count is reached."""

    def __init__(
        self,
        spec: SweepSpec,
        searcher: Searcher,
        scheduler: TrialScheduler,
        journal: Journal,
        trial_info: TrialInfoLog,
        error_path: Callable[[str], Path],
    ) -> None:
        self.spec = spec
        self.plan = trial_plan(spec)  # the spec's part of every trial's context, as a Ray trial's
        self.searcher = searcher
        stand_in = ControllerStandIn(lambda: self.order, lambda t: t.live)
        self.decider = Decider(scheduler, stand_in, TIME_ATTR, spec.stop.max_iterations, searcher)
        self.journal = journal
        self.trial_info = trial_info
        self.error_path = error_path
        self.trials: dict[str, LocalTrial] = {}
        self.order: list[LocalTrial] = []  # the trials in suggestion order
        self.queue: list[LocalTrial] = []  # suggested, not finished: run (again) first
        self.lock = threading.Lock()  # searcher, scheduler and journal are used under it
        self.abort = threading.Event()
        self.out_of_time = threading.Event()
        self.finished_suggesting = False
        self.constants = constant_space(spec)  # merged under every suggestion, as Ray does
        self._token = uuid.uuid4().hex[:8]

    @property
    def slots(self) -> int:
        """Trials at once: ``search.max_concurrent``, else what fits on this machine's CPUs."""
        if self.spec.search.max_concurrent:
            return self.spec.search.max_concurrent
        return max(1, int((os.cpu_count() or 1) // self.spec.resources.cpus_per_trial))

    # -- the loop (main thread) ----------------------------------------------------
    def run(self, hooks: Hooks) -> list[LocalTrial]:
        """Run every trial left; returns all trials, finished or not, in suggestion order.

        Stops early, leaving unfinished trials out of the journal, when
        ``hooks.interrupted()`` turns true or a second signal raises KeyboardInterrupt.
        """
        budget = self.spec.stop.time_budget_s
        deadline = time.monotonic() + budget if budget else None
        with ThreadBackend(self.slots, self._train) as backend:
            try:
                while True:
                    if hooks.interrupted():
                        self.abort.set()
                        break
                    if deadline is not None and time.monotonic() >= deadline:
                        self.out_of_time.set()  # running trials stop at their next report
                    while backend.free and not self.out_of_time.is_set():
                        trial = self._next_trial()
                        if trial is None:
                            break
                        trial.status, trial.started = RUNNING, trial.started or time.time()
                        hooks.started(trial)
                        backend.start_trial(trial)
                    if not backend.busy:
                        break
                    for trial in backend.wait_ended(POLL_S):
                        if trial.outcome is not None:
                            hooks.ended(trial)
                    hooks.tick()
            except BaseException:
                self.abort.set()
                raise
        return list(self.order)

    def _next_trial(self) -> LocalTrial | None:
        """An unfinished trial to run again, else a new suggestion (None: none now)."""
        if self.queue:
            return self.queue.pop(0)
        if self.finished_suggesting or len(self.trials) >= self.spec.total_trials:
            return None
        trial_id = f"{self._token}_{len(self.trials):05d}"
        with self.lock:
            config = self.searcher.suggest(trial_id)
            if config == Searcher.FINISHED:
                self.finished_suggesting = True
                return None
            if not isinstance(config, dict):
                return None  # the searcher waits for results (strict batches)
            config = {**self.constants, **config}
            trial = self.add(trial_id, config)
            self.journal.suggested(trial_id, trial.index, config)
        return trial

    def add(self, trial_id: str, config: dict[str, Any]) -> LocalTrial:
        """A suggested trial, made known to the scheduler."""
        trial = LocalTrial(trial_id, config)
        self.trials[trial_id] = trial
        self.order.append(trial)
        self.decider.added(trial)
        return trial

    # -- one trial (a pool thread) -----------------------------------------------------
    def _train(self, trial: LocalTrial) -> None:
        from raysweep.trainables.builtins import split_seed
        from raysweep.trainables.data import load_dataset
        from raysweep.trainables.gbm import fit_gbm

        ctx = self.context(trial.index)
        failures = 0
        while True:
            trial.restart()
            started = time.monotonic()
            self.trial_info.record(trial.trial_id, "start", ctx)
            try:
                dataset = load_dataset(ctx.trainable_args, split_seed(ctx))
                fit_gbm(self.spec.trainable, trial.params, ctx, dataset,  # type: ignore[arg-type]
                        self._reporter(trial, started), keep_checkpoints=False)  # fmt: skip
            except SweepAborted:
                return
            except TrialStopped:
                outcome = "stopped"
            except Exception:
                if self.abort.is_set():
                    return
                if failures < self.spec.max_failures:
                    failures += 1
                    continue
                outcome = "errored"
                path = self.error_path(trial.trial_id)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(traceback.format_exc(), encoding="utf-8")
                trial.error_file = str(path)
            else:
                outcome = "completed"
                self.trial_info.record(trial.trial_id, "returned", ctx)
            break
        with self.lock:
            trial.finish(outcome, time.time())
            self.complete(trial)
            self.journal.ended(trial.end_record())

    def _reporter(self, trial: LocalTrial, started: float) -> Reporter:
        def report(values: dict[str, float], _checkpoint: Path | None) -> None:
            if self.abort.is_set():
                raise SweepAborted
            row = {**values, TIME_ATTR: len(trial.rows) + 1,
                   "time_total_s": time.monotonic() - started}  # fmt: skip
            with self.lock:
                trial.add_row(row)
                if self.decider.result(trial, row, stop_now=self.out_of_time.is_set()):
                    raise TrialStopped

        return report

    def complete(self, trial: LocalTrial) -> None:
        """Tell the scheduler and searcher that ``trial`` ended (Ray Tune's calls)."""
        errored = trial.outcome == "errored"
        self.decider.ended(trial, None if errored else trial.last_result, error=errored)

    def context(self, index: int) -> TrialContext:
        """The trial context a Ray trial of this index gets (seed, threads, checkpoints)."""
        return self.plan.context(index)
