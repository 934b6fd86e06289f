"""Ray Tune's on-disk experiment folder, read as JSON without importing Ray.

Ray Tune writes ``experiment_state-<session>.json`` (every trial's JSON state and
run metadata) with each experiment snapshot, and ``tuner.pkl`` when the Tuner
is created. Their layout is Ray's private format (``TuneController.save_to_dir``,
checked at start-up by ``raysweep._raycompat.targets``); ``sweep status`` and
resume planning read it here, and only here.
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from raysweep.errors import ResumeError

TUNER_PKL = "tuner.pkl"
STATE_GLOB = "experiment_state-*.json"
TRIAL_RESULT_FILE = "result.json"  # Ray's per-trial rows (EXPR_RESULT_FILE)
FINAL_STATUSES = ("TERMINATED", "ERROR")


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


def read_trial_rows(exp_dir: Path, keys: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    """Per trial id, the rows Ray wrote to ``<trial dir>/result.json``, each cut to ``keys``.

    One JSON object per line (``JsonLoggerCallback``); a torn or foreign line is
    skipped, a trial without rows is absent.
    """
    wanted = (*keys, "trial_id")
    trials: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(exp_dir.glob(f"*/{TRIAL_RESULT_FILE}")):
        try:
            lines = path.read_bytes().splitlines()
        except OSError:
            continue
        for line in lines:
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict) and "trial_id" in row:
                kept = {k: row[k] for k in wanted if k in row}
                trials.setdefault(str(kept.pop("trial_id")), []).append(kept)
    return trials


def check_restorable(exp_dir: Path) -> None:
    """ResumeError unless ``exp_dir`` is an experiment that ``Tuner.restore`` can read.

    ``tuner.pkl`` is a pickle written by Ray: only resume run directories you trust.
    """
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
