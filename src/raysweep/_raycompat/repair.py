"""Bring a killed experiment's snapshot up to its trials' newest checkpoints before restore.

Ray Tune snapshots the experiment (trial states, each trial's latest
checkpoint) at most every ``TUNE_GLOBAL_CHECKPOINT_S`` and uploads it
asynchronously, while trials keep reporting checkpoints and the driver deletes
all but ``num_to_keep`` of them at once. After a ``kill -9`` the snapshot can
therefore point at a checkpoint that was already rotated away (Ray then fails
the trial with "Could not recover from checkpoint as it does not exist"), and
it always lags behind the checkpoints that did reach storage.

Ray itself wrote everything needed to catch up: the trial's ``result.json``
has one row per report, with ``checkpoint_dir_name`` for reports that carried
a checkpoint, and a row is written only after its checkpoint was registered.
For every unfinished trial this module replays the rows after the snapshot's
last result into the trial's run metadata (last result, metric analysis) up to
the newest row whose checkpoint directory exists, and makes that checkpoint the
one to restore from. With no such row and the snapshot's checkpoint gone, the
trial restarts from scratch (same trial id, same seed). The original snapshot
is kept as ``<name>.orig``.

Checkpoint directories of any trial that its (repaired) snapshot does not track
are deleted: Ray would keep them forever, beyond ``num_to_keep``.

Rows a trial reported after the checkpoint it continues from (or all of them,
when it restarts from scratch) are reported again once it runs: they are cut
from its ``result.json`` (the whole file kept as ``result.json.orig``), so that
every iteration appears in it once.

The trial's next checkpoint directory name (``checkpoint_<index>``, Ray counts
it in the trial's storage context) is moved past every name the trial used:
the snapshot's count lags like the rest of it, and a resumed trial would
otherwise write its new checkpoints into directories its rows already name
(the one it continues from included), so that a later resume would restore
a state from another iteration than its row says.
"""

from __future__ import annotations

import json
import re
import shutil
from numbers import Number
from pathlib import Path
from typing import Any

import pyarrow.fs

from raysweep._raycompat.experiment_state import FINAL_STATUSES, newest_state_file
from raysweep.jsonio import write_text_atomic

ITER = "training_iteration"
_CHECKPOINT_DIR = re.compile(r"checkpoint_\d+")


def repair_snapshot(exp_dir: Path, storage: tuple[str, Any] | None = None) -> list[str]:
    """Fix the newest snapshot of ``exp_dir`` in place; returns one line per changed trial.

    ``storage``: where the experiment really is, as ``(path, pyarrow filesystem)``,
    when ``exp_dir`` is a local copy of a remote one (``RunDir.local_experiment``):
    a checkpoint the repair names is named there. Default: ``exp_dir`` itself.
    """
    path = newest_state_file(exp_dir)
    if path is None:
        return []
    data = json.loads(path.read_text(encoding="utf-8"))
    notes, changed = [], False
    for item in data["trial_data"]:
        trial = json.loads(item[0])
        name = f"trial {trial['trial_id']}"
        if trial["status"] not in FINAL_STATUSES:
            if _advance_checkpoint_index(exp_dir, trial):
                item[0] = json.dumps(trial)
                changed = True
            new_meta, note = _catch_up(exp_dir, trial, item[1], storage)
            if note:
                item[1] = new_meta
                notes.append(f"{name}: {note}")
                changed = True
            cut = _drop_rows_after(exp_dir, trial, item[1])
            if cut:
                notes.append(f"{name}: {cut} row(s) after its restart point dropped")
        dropped = drop_untracked_checkpoints(exp_dir, trial, item[1])
        if dropped:
            notes.append(f"{name}: {len(dropped)} checkpoint(s) it no longer tracks deleted")
    if changed:
        backup = path.with_name(path.name + ".orig")
        if not backup.exists():
            shutil.copy2(path, backup)
        write_text_atomic(path, json.dumps(data))
    return notes


def _catch_up(
    exp_dir: Path, trial: dict[str, Any], meta_json: str, storage: tuple[str, Any] | None
) -> tuple[str, str | None]:
    from ray.train import Checkpoint
    from ray.train._internal.checkpoint_manager import _CheckpointManager
    from ray.train._internal.session import _TrainingResult
    from ray.tune.trainable.metadata import _TrainingRunMetadata

    meta = _TrainingRunMetadata.from_json_state(meta_json)
    manager = meta.checkpoint_manager
    if manager is None:
        return meta_json, None
    latest = manager.latest_checkpoint_result
    if latest is not None and latest.checkpoint is not None:
        # Recorded paths are where the run was; the directory may have moved since.
        recorded_dir, filesystem = Path(latest.checkpoint.path).parent, latest.checkpoint.filesystem
    else:  # none in the snapshot yet: its rows may name some
        logdir = trial.get("relative_logdir")
        if not isinstance(logdir, str) or not logdir:
            return meta_json, None
        root, filesystem = storage or (str(exp_dir.resolve()), pyarrow.fs.LocalFileSystem())
        recorded_dir = Path(root) / Path(logdir).name
    trial_dir = exp_dir / recorded_dir.name
    stored = _read_rows(trial_dir / "result.json")
    short = _rewind_to_rows(meta, trial_dir, stored)
    if short:
        return meta.get_json_state(), short
    rows = _rows_after(stored, meta.last_result)
    usable = [i for i, row in enumerate(rows) if _complete(trial_dir, row)]
    if usable:
        upto = usable[-1]
        for row in rows[: upto + 1]:
            _replay(meta, row)
        name = rows[upto]["checkpoint_dir_name"]
        checkpoint = Checkpoint(
            path=(recorded_dir / name).as_posix(), filesystem=filesystem
        )  # Ray re-bases it with the others when the directory moved
        result = _TrainingResult(checkpoint=checkpoint, metrics=dict(rows[upto]))
        kept = [
            r
            for r in manager._checkpoint_results
            if _exists(r, trial_dir) and _checkpoint_name(r) != name
        ]
        manager._checkpoint_results = [*kept, result]
        manager._latest_checkpoint_result = result
        meta.checkpoint_manager = manager
        note = f"continues from {name} (iteration {rows[upto][ITER]})"
        return meta.get_json_state(), note
    if latest is None or latest.checkpoint is None:
        return meta_json, None  # never checkpointed: Ray restarts it, nothing to catch up to
    if _exists(latest, trial_dir):
        return meta_json, None
    older = [r for r in manager._checkpoint_results if _exists(r, trial_dir)]
    if older:
        manager._checkpoint_results = older
        manager._latest_checkpoint_result = older[-1]
        note = "its last checkpoint was rotated away; continues from an older one"
    else:
        meta.checkpoint_manager = _CheckpointManager(manager.checkpoint_config)
        note = "its checkpoints were rotated away; restarts from scratch"
    meta.invalidate_cache()
    return meta.get_json_state(), note


def _rewind_to_rows(meta: Any, trial_dir: Path, rows: list[dict[str, Any]]) -> str | None:
    """When the stored ``rows`` end before the snapshot's last result, go back to them.

    A snapshot stored ahead of its trial's rows (an upload cut short by a kill)
    would continue the trial after rows that were never stored. The trial
    continues instead from its newest checkpoint the stored rows reach, or
    from scratch, and its run metadata is rebuilt from those rows.
    """
    from ray.train._internal.checkpoint_manager import _CheckpointManager

    last = meta.last_result.get(ITER) if meta.last_result else None
    if not isinstance(last, int):
        return None
    stored = max((r.get(ITER) or 0 for r in rows), default=0)
    if stored >= last:
        return None
    manager = meta.checkpoint_manager
    reachable = [
        r
        for r in manager._checkpoint_results
        if _exists(r, trial_dir) and int(r.metrics.get(ITER) or 0) <= stored
    ]
    restart_at = int(reachable[-1].metrics.get(ITER) or 0) if reachable else 0
    meta.last_result, meta.last_result_time = {}, -float("inf")
    meta.metric_analysis, meta.metric_n_steps = {}, {}
    for row in rows:
        if int(row.get(ITER) or 0) <= restart_at:
            _replay(meta, row)
    if reachable:
        manager._checkpoint_results = reachable
        manager._latest_checkpoint_result = reachable[-1]
        where = f"continues from {_checkpoint_name(reachable[-1])} (iteration {restart_at})"
    else:
        meta.checkpoint_manager = _CheckpointManager(manager.checkpoint_config)
        where = "restarts from scratch"
    meta.invalidate_cache()
    return f"its stored rows end at iteration {stored}, before its snapshot's {last}; {where}"


def _drop_rows_after(exp_dir: Path, trial: dict[str, Any], meta_json: str) -> int:
    """Cut the rows a trial will report again from its result.json; returns how many.

    Ray restores the trial from its latest checkpoint, whose iteration the next
    report follows; a trial without one starts again from iteration 1.
    """
    from ray.tune.trainable.metadata import _TrainingRunMetadata

    logdir = trial.get("relative_logdir")
    if not isinstance(logdir, str) or not logdir:
        return 0
    meta = _TrainingRunMetadata.from_json_state(meta_json)
    manager = meta.checkpoint_manager
    latest = manager.latest_checkpoint_result if manager is not None else None
    restart_at = 0
    if latest is not None and latest.checkpoint is not None:
        restart_at = int(latest.metrics.get(ITER) or 0)
    return truncate_rows(exp_dir / Path(logdir).name / "result.json", restart_at)


def _advance_checkpoint_index(exp_dir: Path, trial: dict[str, Any]) -> bool:
    """Name the trial's next checkpoint past every one it wrote or its rows name.

    ``trial``: its snapshot entry, changed in place; True when it was changed.
    """
    from ray.tune.utils.serialization import TuneFunctionDecoder, TuneFunctionEncoder

    logdir = trial.get("relative_logdir")
    if not isinstance(logdir, str) or not logdir or "storage" not in trial:
        return False
    trial_dir = exp_dir / Path(logdir).name
    names = [path.name for path in trial_dir.glob("checkpoint_*")]
    names += [str(row.get("checkpoint_dir_name")) for row in _read_rows(trial_dir / "result.json")]
    used = [int(name.rsplit("_", 1)[1]) for name in names if _CHECKPOINT_DIR.fullmatch(name)]
    if not used:
        return False
    # Ray's own snapshot, read back as Ray reads it (its decoder refuses pickles by default)
    context = json.loads(
        json.dumps(trial["storage"]), cls=TuneFunctionDecoder, allow_cloudpickle=True
    )
    if context.current_checkpoint_index > max(used):
        return False
    context.current_checkpoint_index = max(used) + 1
    trial["storage"] = json.loads(json.dumps(context, cls=TuneFunctionEncoder))
    return True


def drop_untracked_checkpoints(exp_dir: Path, trial: dict[str, Any], meta_json: str) -> list[str]:
    """Delete the trial's checkpoint directories its snapshot does not track; returns their names.

    Deletions held back until a snapshot was stored (``_raycompat/checkpoint_rotation.py``),
    checkpoints caught up past (``_catch_up`` tracks only the newest) and ones still
    being written at a ``kill -9`` are on disk but in no checkpoint manager: Ray
    would never rotate them away, and nothing restores from them.
    """
    from ray.tune.trainable.metadata import _TrainingRunMetadata

    logdir = trial.get("relative_logdir")
    if not isinstance(logdir, str) or not logdir:
        return []
    manager = _TrainingRunMetadata.from_json_state(meta_json).checkpoint_manager
    if manager is None:
        return []
    results = [*manager._checkpoint_results, manager.latest_checkpoint_result]
    tracked = {_checkpoint_name(result) for result in results}
    trial_dir = exp_dir / Path(logdir).name
    dropped = sorted(
        path.name
        for path in trial_dir.glob("checkpoint_*")
        if path.is_dir() and path.name not in tracked
    )
    for name in dropped:
        shutil.rmtree(trial_dir / name, ignore_errors=True)
    return dropped


def truncate_rows(result_file: Path, restart_at: int) -> int:
    """Keep the rows up to iteration ``restart_at`` (the first run of them); returns rows cut."""
    if not result_file.is_file():
        return 0
    lines = result_file.read_text(encoding="utf-8").splitlines(keepends=True)
    kept: list[str] = []
    for line in lines:
        try:
            iteration = json.loads(line).get(ITER)
        except ValueError:
            break  # a torn last line: cut with the rest
        if not isinstance(iteration, int) or iteration > restart_at:
            break
        kept.append(line)
    if len(kept) == len(lines):
        return 0
    backup = result_file.with_name(result_file.name + ".orig")
    if not backup.exists():
        shutil.copy2(result_file, backup)
    write_text_atomic(result_file, "".join(kept))
    return len(lines) - len(kept)


def _read_rows(result_file: Path) -> list[dict[str, Any]]:
    """result.json's rows, up to a torn last line ([] when absent)."""
    if not result_file.is_file():
        return []
    rows = []
    for line in result_file.read_text(encoding="utf-8").splitlines():
        try:
            rows.append(json.loads(line))
        except ValueError:
            break  # a torn last line
    return rows


def _rows_after(rows: list[dict[str, Any]], last: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``rows`` reported after the snapshot's ``last_result`` ([] when unsure)."""
    if not last:
        return rows
    for i in range(len(rows) - 1, -1, -1):
        row = rows[i]
        if row.get(ITER) == last.get(ITER) and row.get("time_total_s") == last.get("time_total_s"):
            return rows[i + 1 :]
    return []


def _complete(trial_dir: Path, row: dict[str, Any]) -> bool:
    name = row.get("checkpoint_dir_name")
    if not isinstance(name, str) or not name:
        return False
    return (trial_dir / name).is_dir() and any((trial_dir / name).iterdir())


def _checkpoint_name(result: Any) -> str | None:
    checkpoint = getattr(result, "checkpoint", None)
    return Path(checkpoint.path).name if checkpoint is not None else None


def _exists(result: Any, trial_dir: Path) -> bool:
    checkpoint = getattr(result, "checkpoint", None)
    return checkpoint is not None and (trial_dir / Path(checkpoint.path).name).is_dir()


def _replay(meta: Any, row: dict[str, Any]) -> None:
    """What Trial.update_last_result does for one reported row."""
    from ray.tune.result import DEBUG_METRICS
    from ray.tune.utils import flatten_dict

    meta.last_result = row
    meta.last_result_time = float(row.get("timestamp", meta.last_result_time))
    metrics = {k: v for k, v in row.items() if k not in DEBUG_METRICS}
    for metric, value in flatten_dict(metrics).items():
        if isinstance(value, Number):
            meta.update_metric(metric, value, step=row.get(ITER))
