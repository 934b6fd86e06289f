"""Drive a local run (``"execution": "local"``): lock, log, state, trials in-process, outputs.

The Ray engine's counterpart without Ray, on the same run layer (``raysweep.run``:
lock, lifecycle, signals, progress, collect and write): the same run directory
(spec.json, state.json, repro.json, trials.jsonl, trial_info.jsonl, results,
reports, resource_usage.json), plus ``local/journal.jsonl`` in place of Ray Tune's
``tune/`` experiment, from which ``sweep resume`` continues exactly once.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import IO

from raysweep.config.schema import SweepSpec
from raysweep.engines.local.trial import LocalTrial
from raysweep.gpu.allocation import GPUPlan
from raysweep.output_log import RunLog
from raysweep.results.records import SweepResult
from raysweep.run.lifecycle import drive_locked, start_run
from raysweep.run.opening import announce_opening
from raysweep.run.outputs import collect_result, write_outputs
from raysweep.run.signals import GracefulStop
from raysweep.rundir import RunDir
from raysweep.search.checks import search_warnings
from raysweep.search.points import WarmStart


@dataclass(frozen=True)
class LocalOptions:
    """How a local run is driven, beside its spec."""

    gpu_plan: GPUPlan
    record: SweepSpec | None = None  # a spec to (re)write to spec.json once the lock is held
    warm_start: WarmStart | None = None  # points the searcher suggests first
    record_warm_start: bool = False  # a new run: write warm_start to state.json
    notes: tuple[str, ...] = ()  # flags that do nothing here, said once in the log


def drive_local(
    spec: SweepSpec, run_dir: RunDir, options: LocalOptions, out: IO[str], stop: GracefulStop
) -> int:
    """Run (or continue) ``spec``'s trials in this process; 0 ok, 1 failed, 130 interrupted."""

    def body(log: RunLog) -> SweepResult:
        start_run(run_dir, spec, options.gpu_plan, options.record, options.warm_start,
                  options.record_warm_start)  # fmt: skip
        return _drive(spec, run_dir, options, log, stop)

    return drive_locked(run_dir, out, stop, body)


def _drive(
    spec: SweepSpec, run_dir: RunDir, options: LocalOptions, log: RunLog, stop: GracefulStop
) -> SweepResult:
    from raysweep.gpu.monitor import ResourceMonitor
    from raysweep.repro.determinism import set_deterministic

    stop.check()
    started = time.monotonic()
    log.print(
        f"Sweep {spec.name!r}: {spec.total_trials} trials, {spec.search.algorithm} search, "
        f"{spec.scheduler.type} scheduler, seed {spec.seed}, in-process (no Ray) -> {run_dir}"
    )
    announce_opening(spec, run_dir, log)
    for note in options.notes:
        log.print(f"note: {note}")
    for warning in search_warnings(spec):
        log.print(warning)
    _import_before_trials(spec)
    set_deterministic(spec.reproducibility.deterministic, threads=spec.resources.threads_per_trial)
    with ResourceMonitor(run_dir.usage_path, gpu_ids=()):
        trials = _run_trials(spec, run_dir, options, log, stop)
    stop.check()
    result = collect_result(spec, run_dir, [t.view() for t in trials], started)
    write_outputs(result, run_dir)
    return result


def _import_before_trials(spec: SweepSpec) -> None:
    """Import, in this thread, what the trials and report.html import, before any trial starts.

    Two threads importing one package at the same moment can see it half initialised
    (scikit-learn's circular imports then raise ImportError in a trial), so no trial
    thread may be the first to import anything: the GBM library, scikit-learn (the data
    loader, which also caches the split every trial shares) and the report's libraries
    are imported here. On the cores the trials keep busy, importing them alongside the
    trials would cost about as much time.
    """
    import contextlib
    import importlib

    from raysweep.report.preload import import_report_modules
    from raysweep.trainables.builtins import split_seed
    from raysweep.trainables.context import TrialContext
    from raysweep.trainables.data import load_dataset

    for module in (spec.trainable, "raysweep.trainables.gbm", "sklearn.datasets",
                   "sklearn.model_selection"):  # fmt: skip
        importlib.import_module(module)  # the trainable is lightgbm, xgboost or catboost
    args = dict(spec.trainable_args)
    ctx = TrialContext(index=0, seed=0, metric=spec.metric, mode=spec.mode,
                       trainable_args=args, master_seed=spec.seed)  # fmt: skip
    with contextlib.suppress(Exception):  # bad data: each trial reports the error as its own
        load_dataset(args, split_seed(ctx))
    import_report_modules()


def _run_trials(
    spec: SweepSpec, run_dir: RunDir, options: LocalOptions, log: RunLog, stop: GracefulStop
) -> list[LocalTrial]:
    from raysweep.engines.local.controller import Hooks, LocalController
    from raysweep.engines.local.journal import Journal
    from raysweep.engines.local.replay import replay
    from raysweep.engines.local.trial_info import TrialInfoLog
    from raysweep.run.progress import TrialProgress
    from raysweep.schedulers.build import build_scheduler
    from raysweep.search.build import build_searcher
    from raysweep.trainables.plan import constant_space

    several = spec.objectives is not None  # the searcher and scheduler hold their own metrics
    metric, mode = (None, None) if several else (spec.metric, spec.mode)
    points = options.warm_start.points if options.warm_start is not None else ()
    searcher = build_searcher(spec, points)
    searcher.set_search_properties(metric, mode, constant_space(spec))
    scheduler = build_scheduler(spec)
    scheduler.set_search_properties(metric, mode)
    records = run_dir.read_journal()
    trial_info = TrialInfoLog(run_dir.trial_info_path)
    with Journal(run_dir.journal_path) as journal:
        controller = LocalController(
            spec, searcher, scheduler, journal, trial_info, run_dir.error_path
        )
        if not records and options.warm_start is not None:
            for line in options.warm_start.announcement():
                log.print(line)
        if records:
            seen = replay(controller, records)
            log.print(
                f"Resuming: {seen.finished} finished trial(s) kept, {seen.unfinished} "
                f"unfinished one(s) run again from their first iteration, "
                f"{max(0, spec.total_trials - len(controller.trials))} to suggest"
            )
            if seen.differing:
                log.print(
                    f"warning: the searcher, replayed, drew other configs for trial indices "
                    f"{seen.differing[:10]}; the recorded configs are kept"
                )
        progress = TrialProgress(
            run_dir.events_path, spec.metric, spec.mode, spec.total_trials, log.stream,
            terminal=log.out, log_path=run_dir.log_path, rank_by=spec.ranking,
            max_iterations=spec.iteration_budget, info_path=run_dir.trial_info_path,
        )  # fmt: skip
        for trial in controller.order:  # finished before this invocation: kept as recorded
            if trial.outcome is not None:
                progress.count_finished(trial.view())
        progress.start()

        def started(trial: LocalTrial) -> None:
            progress.trial_started(trial.view())

        def ended(trial: LocalTrial) -> None:
            view = trial.view()
            progress.trial_ended(view, view.error)

        hooks = Hooks(started, ended, progress.tick, lambda: stop.received is not None)
        try:
            done = controller.run(hooks)
        finally:
            progress.close()
            trial_info.close()
    return done
