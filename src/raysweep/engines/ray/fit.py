"""Run one Ray Tune experiment, new or restored: the only place that calls ``Tuner.fit()``."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from raysweep._raycompat.actor_env import plain_trial_actors
from raysweep._raycompat.actor_reuse import keep_starting_actors
from raysweep._raycompat.entry_encoder import EntryEncoder
from raysweep._raycompat.node_loss import retry_lost_nodes
from raysweep._raycompat.registry_cache import memoized_registry
from raysweep._raycompat.snapshots import cheap_snapshots
from raysweep._raycompat.trial_rows import TrialRowsLogger
from raysweep._raycompat.tuner_access import grid_trials, replace_restored_configs
from raysweep._raycompat.usage_tags import untagged_callbacks
from raysweep.config.schema import SweepSpec
from raysweep.engines.ray.tuner import BuildOptions, build_tuner_parts
from raysweep.errors import SweepError
from raysweep.schedulers.build import TIME_ATTR
from raysweep.schedulers.restore import REBUILT, RecordedTrial, RestoringScheduler


def run_tuner(
    spec: SweepSpec,
    options: BuildOptions,
    restore: str | Path | None = None,
    retry_errored: bool = False,
    recorded: Sequence[RecordedTrial] = (),
) -> list[Any]:
    """Build ``spec``'s Tuner under ``options`` and run it: new, or restored from ``restore``.

    ``restore``: the experiment's path, on ``options.storage_filesystem`` when that is set.

    Every Tuner raysweep runs (a run's experiments, extensions, the GPU probe,
    ``sweep repro``) comes through here, from the one builder; Ray must be
    running (``engines.ray.ray_session``).

    Returns Ray's Trial objects of the experiment. A restored experiment gets the
    freshly built TuneConfig and callbacks (this process's, with run-time
    overrides such as max_concurrent), keeping its name and storage path:
    finished trials are kept, unfinished ones continue from their last
    checkpoint, errored ones are resumed from theirs when ``retry_errored``.
    Its scheduler is first given ``recorded`` (the trials' rows so far), so early
    stopping decides as it would have without the interruption
    (``schedulers/restore.py``).

    Ray Tune runs with raysweep's savings in its controller: trainable lookups
    memoized, trial actors started as plain workers on a local Ray, a starting
    actor never killed for a cached one, snapshots that cost what changed, a
    trial whose node died retried without using up ``max_failures``, and no usage
    tag computed while usage stats are off (``raysweep._raycompat``).
    """
    from ray import tune

    parts = build_tuner_parts(spec, options)
    callbacks = [*(parts.run_config.callbacks or []), TrialRowsLogger(), EntryEncoder()]
    if restore is None:
        parts.run_config.callbacks = callbacks
        tuner = tune.Tuner(
            parts.trainable,
            param_space=parts.param_space,
            tune_config=parts.tune_config,
            run_config=parts.run_config,
        )
    else:
        # Restore reads results with ExperimentAnalysis, which warns about every trial
        # that had not reported yet (normal after a crash): keep that out of the log.
        analysis_log = logging.getLogger("ray.tune.analysis.experiment_analysis")
        level = analysis_log.level
        analysis_log.setLevel(logging.ERROR)
        try:
            tuner = tune.Tuner.restore(
                str(restore),
                trainable=parts.trainable,
                storage_filesystem=options.storage_filesystem,
                resume_unfinished=True,
                resume_errored=retry_errored,
            )
        finally:
            analysis_log.setLevel(level)
        fresh = parts.tune_config.scheduler
        if fresh is not None and spec.scheduler.type in REBUILT:
            limit = spec.stop.max_iterations
            parts.tune_config.scheduler = RestoringScheduler(fresh, recorded, TIME_ATTR, limit)
        replace_restored_configs(tuner, parts.tune_config, callbacks)
    with (
        memoized_registry(),
        plain_trial_actors(),
        keep_starting_actors(),
        cheap_snapshots(),
        retry_lost_nodes(),  # a trial whose node died continues elsewhere
        untagged_callbacks(),  # no MLflow import for a usage tag never sent
        own_errors_unwrapped(),
    ):
        return grid_trials(tuner.fit())


@contextmanager
def own_errors_unwrapped() -> Iterator[None]:
    """A raysweep error raised in Ray Tune's loop (a callback's) comes out as itself.

    Ray Tune turns an exception in its result handling into a TuneError holding the
    traceback as text, and Tuner.fit wraps that in another: the user saw two
    tracebacks instead of raysweep's one-line error (engines/ray/metric_check.py).
    """
    from ray.tune import TuneError

    try:
        yield
    except TuneError as exc:
        cause: BaseException | None = exc
        while cause is not None and not isinstance(cause, SweepError):
            cause = cause.__cause__ or cause.__context__
        if cause is None:
            raise
        raise cause from None
