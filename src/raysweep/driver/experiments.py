"""The Ray Tune experiment directories of a run, read without unpickling anything.

A run starts with one experiment, ``tune/``. ``sweep resume --num-samples N``
adds one more per extension (``tune-ext-1/``, ``tune-ext-2/``, ...), because
Ray cannot add trials to a restored experiment. state.json lists them in
order as ``experiments``; each part knows how many trials it runs and the
trial index it starts counting from.
"""

from __future__ import annotations

import json
import pickle
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from raysweep.errors import ResumeError

TUNE_DIR = "tune"
EXT_PREFIX = "tune-ext-"
TUNER_PKL = "tuner.pkl"
STATE_GLOB = "experiment_state-*.json"
FINAL_STATUSES = ("TERMINATED", "ERROR")


@dataclass(frozen=True)
class Part:
    """One Ray Tune experiment of a run."""

    dir: str
    trials: int
    start_index: int = 0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_json(data: dict[str, Any]) -> Part:
        return Part(
            dir=str(data["dir"]),
            trials=int(data["trials"]),
            start_index=int(data.get("start_index", 0)),
        )


def extension_dir(number: int) -> str:
    """Directory name of the ``number``-th extension (1-based)."""
    return f"{EXT_PREFIX}{number}"


def newest_state_file(exp_dir: Path) -> Path | None:
    """Ray's newest ``experiment_state-<session>.json`` (None before the first snapshot)."""
    files = sorted(exp_dir.glob(STATE_GLOB))
    return files[-1] if files else None


def read_trial_states(exp_dir: Path) -> list[dict[str, Any]]:
    """Trial id, status and config of every trial in the experiment's newest snapshot.

    Raises ResumeError when the snapshot is not valid JSON of the expected shape.
    """
    path = newest_state_file(exp_dir)
    if path is None:
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        trials = []
        for trial_json, _meta in data["trial_data"]:
            trial = json.loads(trial_json) if isinstance(trial_json, str) else trial_json
            trials.append(
                {
                    "trial_id": trial["trial_id"],
                    "status": trial["status"],
                    "config": trial.get("config", {}),
                }
            )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ResumeError(
            f"{path} is unreadable or corrupt ({type(exc).__name__}: {exc}); "
            "the run cannot be resumed from it. Nothing was changed."
        ) from None
    return trials


def check_part(run_dir: Path, part: Part) -> None:
    """ResumeError unless ``part`` is a Ray Tune experiment that Tuner.restore can read."""
    exp_dir = run_dir / part.dir
    hint = "Nothing was changed; restore the directory from a backup or start a new run."
    if not exp_dir.is_dir():
        raise ResumeError(f"{exp_dir} is missing: Ray Tune's experiment directory is gone. {hint}")
    tuner_pkl = exp_dir / TUNER_PKL
    if not tuner_pkl.is_file():
        raise ResumeError(f"{tuner_pkl} is missing: the experiment cannot be restored. {hint}")
    try:
        pickle.loads(tuner_pkl.read_bytes())
    except Exception as exc:
        raise ResumeError(f"{tuner_pkl} is corrupt ({type(exc).__name__}: {exc}). {hint}") from None
    read_trial_states(exp_dir)


def is_finished(run_dir: Path, part: Part, retry_errored: bool) -> bool:
    """Whether every trial of the part was created and ended (errored ones count unless retried)."""
    trials = read_trial_states(run_dir / part.dir)
    final = ("TERMINATED",) if retry_errored else FINAL_STATUSES
    return len(trials) >= part.trials and all(t["status"] in final for t in trials)


def has_snapshot(run_dir: Path, part: Part) -> bool:
    """Whether Ray saved at least one experiment snapshot for the part."""
    return newest_state_file(run_dir / part.dir) is not None


def status_counts(run_dir: Path, parts: list[Part]) -> dict[str, int]:
    """Trials per Ray status over every part (from the newest snapshots)."""
    counts: dict[str, int] = {}
    for part in parts:
        exp_dir = run_dir / part.dir
        if not exp_dir.is_dir():
            continue
        for trial in read_trial_states(exp_dir):
            counts[trial["status"]] = counts.get(trial["status"], 0) + 1
    return counts


def load_trials(run_dir: Path, parts: list[Part], metric: str, mode: str) -> list[Any]:
    """Ray Trial objects of every part, from each experiment's newest snapshot."""
    from ray.tune import ExperimentAnalysis

    trials: list[Any] = []
    for part in parts:
        exp_dir = run_dir / part.dir
        if newest_state_file(exp_dir) is None:
            continue
        analysis = ExperimentAnalysis(str(exp_dir), default_metric=metric, default_mode=mode)
        trials.extend(analysis.trials)
    return trials
