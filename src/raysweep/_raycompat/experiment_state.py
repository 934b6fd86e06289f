"""Ray Tune's on-disk experiment folder, read as JSON without importing Ray.

Ray Tune writes ``experiment_state-<session>.json`` (every trial's JSON state and
run metadata) with each experiment snapshot, and ``tuner.pkl`` when the Tuner
is created. Their layout is Ray's private format (``TuneController.save_to_dir``,
checked at start-up by ``raysweep._raycompat.startup_check``); ``sweep status`` and
resume planning read it here, and only here.
"""

from __future__ import annotations

import fnmatch
import json
import pickle
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from raysweep.errors import ResumeError

TUNER_PKL = "tuner.pkl"
STATE_GLOB = "experiment_state-*.json"
TRIAL_RESULT_FILE = "result.json"  # Ray's per-trial rows (EXPR_RESULT_FILE)
FINAL_STATUSES = ("TERMINATED", "ERROR")
CHECKPOINT_PREFIX = "checkpoint_"  # a trial's checkpoint directories (checkpoint_000003)


def newest_state_name(names: Iterable[str]) -> str | None:
    """The newest ``experiment_state-<session>.json`` among file names (None: no snapshot)."""
    found = sorted(n for n in names if fnmatch.fnmatchcase(n, STATE_GLOB))
    return found[-1] if found else None


def is_checkpoint_dir(name: str) -> bool:
    """Whether a trial directory's entry is one of Ray's checkpoint directories."""
    return name.startswith(CHECKPOINT_PREFIX)


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
        data = path.read_bytes()
    except OSError as exc:
        raise _corrupt(str(path), exc) from None
    return parse_trial_states(data, str(path))


def parse_trial_states(data: bytes, source: str) -> list[dict[str, Any]]:
    """Trial id, status and config of every trial in a snapshot's bytes (``source`` names it).

    Raises ResumeError when it is not valid JSON of the expected shape.
    """
    try:
        trials = []
        for trial_json, _meta in json.loads(data)["trial_data"]:
            trial = json.loads(trial_json) if isinstance(trial_json, str) else trial_json
            trials.append(
                {
                    "trial_id": trial["trial_id"],
                    "status": trial["status"],
                    "config": trial.get("config", {}),
                }
            )
    except (ValueError, KeyError, TypeError) as exc:
        raise _corrupt(source, exc) from None
    return trials


def _corrupt(source: str, exc: Exception) -> ResumeError:
    return ResumeError(
        f"{source} is unreadable or corrupt ({type(exc).__name__}: {exc}); "
        "the run cannot be resumed from it. Nothing was changed."
    )


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
    check_tuner_pickle(tuner_pkl.read_bytes() if tuner_pkl.is_file() else None, str(tuner_pkl))
    read_trial_states(exp_dir)


def check_tuner_pickle(data: bytes | None, source: str) -> None:
    """ResumeError unless ``data`` (``tuner.pkl``'s bytes; None: absent) unpickles."""
    hint = "Nothing was changed; restore the directory from a backup or start a new run."
    if data is None:
        raise ResumeError(f"{source} is missing: the experiment cannot be restored. {hint}")
    try:
        pickle.loads(data)
    except Exception as exc:
        raise ResumeError(f"{source} is corrupt ({type(exc).__name__}: {exc}). {hint}") from None
