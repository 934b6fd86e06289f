"""The Ray Tune experiments of a run: restorable or finished, and their Trial objects.

A run starts with one experiment, ``tune/``. ``sweep resume --num-samples N``
adds one more per extension (``tune-ext-1/``, ``tune-ext-2/``, ...), because
Ray cannot add trials to a restored experiment. state.json lists them in
order (``RunDir.parts``); each part knows how many trials it runs and the
trial index it starts counting from.
"""

from __future__ import annotations

from raysweep._raycompat.experiment_state import FINAL_STATUSES
from raysweep.engines.ray.trial_view import trial_view
from raysweep.results.trial_view import TrialView
from raysweep.rundir import Part, RunDir


def check_part(run_dir: RunDir, part: Part) -> None:
    """ResumeError unless ``part`` is a Ray Tune experiment that Tuner.restore can read."""
    run_dir.check_restorable(part)


def is_finished(run_dir: RunDir, part: Part, retry_errored: bool) -> bool:
    """Whether every trial of the part was created and ended (errored ones count unless retried)."""
    trials = run_dir.trial_states(part)
    final = ("TERMINATED",) if retry_errored else FINAL_STATUSES
    return len(trials) >= part.trials and all(t["status"] in final for t in trials)


def load_trials(run_dir: RunDir, parts: list[Part], metric: str, mode: str) -> list[TrialView]:
    """The trials of every part, from each experiment's newest snapshot."""
    from ray.tune import ExperimentAnalysis

    trials: list[TrialView] = []
    for part in parts:
        if not run_dir.has_snapshot(part):
            continue
        path, fs = run_dir.ray_experiment(part)
        analysis = ExperimentAnalysis(
            path, storage_filesystem=fs, default_metric=metric, default_mode=mode
        )
        trials.extend(trial_view(t) for t in analysis.trials)
    return trials
