"""Ray Tune performance settings raysweep applies before Ray Tune is imported.

Each setting was measured with ``python -m benchmarks.run knobs`` (figures and the
trade-offs in benchmarks/BENCHMARKS.md). A value the user already exported wins.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from raysweep._raycompat.result_buffer import LENGTH_ENV as BUFFER_LENGTH_ENV
from raysweep._raycompat.result_buffer import TIME_ENV as BUFFER_TIME_ENV
from raysweep._raycompat.result_buffer import buffer_env

if TYPE_CHECKING:
    from raysweep.config.schema import SweepSpec

SNAPSHOT_ENV = "TUNE_GLOBAL_CHECKPOINT_S"
# Ray Tune's experiment snapshot rewrites every trial's state (~10 KB of JSON per
# trial, ~50-100 us per trial to encode and write on a 2-core VM), so a fixed
# period costs O(trials so far) per snapshot. 2 ms per planned trial keeps that
# under ~5% of the driver's time at the end of the run; 1 s is the floor.
SNAPSHOT_FLOOR_S = 1.0
SNAPSHOT_S_PER_TRIAL = 0.002

RAY_ENV_DEFAULTS: dict[str, str] = {
    # Ray's warning about snapshots forced by checkpoint rotation: inside fit()
    # raysweep forces none (_raycompat/checkpoint_rotation.py); elsewhere, it is noise.
    "TUNE_WARN_EXCESSIVE_EXPERIMENT_CHECKPOINT_SYNC_THRESHOLD_S": "0",
    # Experiment snapshot (trial statuses + searcher state) at most every second
    # instead of Ray's "auto" (>= 10 s): after a kill -9 a resume re-runs at most
    # ~1 s of trial starts/ends. Costs one small JSON write per second; for big
    # sweeps see snapshot_period_s / apply_run_env_defaults.
    SNAPSHOT_ENV: "1",
    # Ray's per-trial CSV and TensorBoard loggers: 2-3x fewer no-op trials/s with
    # them. results.json comes from our own collector; ExperimentAnalysis needs
    # only the JSON logger, which the runner adds back.
    "TUNE_DISABLE_AUTO_CALLBACK_LOGGERS": "1",
    "RAY_USAGE_STATS_ENABLED": "0",
    # Left at Ray's default: RAY_prestart_worker_first_driver=1. Ray starts an idle
    # worker per CPU when the driver connects, and trial actors without a runtime
    # env (_raycompat/actor_env.py) take them, so fit() starts its first trials
    # ~0.6 s sooner (BENCHMARKS.md "Slot efficiency"). On 2 cores starting them
    # competes with ray.init (same process wall time); with more cores it overlaps.
}

# Set whatever the environment says.
RAY_ENV_REQUIRED: dict[str, str] = {
    # Ray's new console output engine drops every TrialProgressCallback passed in, and
    # raysweep's progress callback (trials.jsonl, which crash recovery reads) is one;
    # the old engine at verbose=0 prints nothing.
    "RAY_AIR_NEW_OUTPUT": "0",
    # Ray's check of each result for the sweep's metric raised a ValueError inside its
    # controller (two tracebacks); raysweep's own check replaces it (engines/ray/metric_check.py).
    "TUNE_DISABLE_STRICT_METRIC_CHECKING": "1",
}

_user_set: set[str] | None = None  # keys the environment had before raysweep touched it

# A sweep whose trials neither stop early nor checkpoint (buffers_results) gets
# its reports to Ray Tune's controller in batches: each report was an actor round
# trip plus the controller's own work (about 2.5 ms of driver CPU on 2 cores). A
# batch ends at the trial's end or after RESULT_BUFFER_S; a kill -9 loses the
# reports of an unfinished trial either way (it runs again from its start).
RESULT_BUFFER_LENGTH = 100
RESULT_BUFFER_S = 2


def apply_ray_env_defaults() -> None:
    """Set the defaults above unless the user set them, and the required settings."""
    global _user_set
    if _user_set is None:
        ours = (*RAY_ENV_DEFAULTS, BUFFER_LENGTH_ENV, BUFFER_TIME_ENV)
        _user_set = {key for key in ours if key in os.environ}
    for key, value in RAY_ENV_DEFAULTS.items():
        os.environ.setdefault(key, value)
    os.environ.update(RAY_ENV_REQUIRED)


def snapshot_period_s(total_trials: int) -> float:
    """Experiment snapshot period for a sweep of ``total_trials`` trials (seconds).

    The crash-recovery trade-off: after a kill -9, a resume re-runs the trials
    that finished in the last period (their records in trials.jsonl survive);
    while running, each snapshot costs O(trials so far).
    """
    return max(SNAPSHOT_FLOOR_S, SNAPSHOT_S_PER_TRIAL * max(total_trials, 0))


def buffers_results(spec: SweepSpec) -> bool:
    """Whether ``spec``'s trials may report to Ray Tune in batches.

    Nothing may stop a trial on its reports (FIFO scheduler, no
    ``stop.max_iterations``) and no report may carry a checkpoint: a built-in
    trainable with ``checkpoint.frequency`` 0 (a user's trainable checkpoints as it
    likes). With checkpoints, Ray 2.60's buffered training calls a finished
    trial's ``train`` once more and logs "Should not have reached here".
    """
    from raysweep.trainables.builtins import BUILTIN_TRAINABLES

    return (
        spec.scheduler.type == "fifo"
        and spec.stop.max_iterations is None
        and spec.checkpoint.frequency == 0
        and spec.trainable in BUILTIN_TRAINABLES
    )


def apply_run_env_defaults(total_trials: int, buffer_results: bool = False) -> None:
    """Per-run settings, to call before the Tuner is built (unless the user set them).

    ``buffer_results``: the trials' reports may reach Ray Tune in batches
    (:func:`buffers_results`); otherwise the buffer variables are unset.
    """
    apply_ray_env_defaults()
    user_set = _user_set or set()
    if SNAPSHOT_ENV not in user_set:
        os.environ[SNAPSHOT_ENV] = f"{snapshot_period_s(total_trials):g}"
    if BUFFER_LENGTH_ENV in user_set or BUFFER_TIME_ENV in user_set:  # as the user set them
        return
    os.environ.pop(BUFFER_LENGTH_ENV, None)  # off: unset (set, Ray warns with Hyperband)
    os.environ.pop(BUFFER_TIME_ENV, None)
    if buffer_results:
        os.environ.update(buffer_env(RESULT_BUFFER_LENGTH, RESULT_BUFFER_S))
