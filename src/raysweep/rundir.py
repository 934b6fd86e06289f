"""RunDir: the only owner of a run directory's layout and file formats.

Every file name of ``<storage>/<name>/`` is spelled here and nowhere else, and
every raysweep file in it is read and written through this class (JSON, never
pickle; writes are atomic: temp file + rename). Ray Tune's own experiment
folders (``tune/``, ``tune-ext-N/``) are named here too; what is inside them is
Ray's format, read without Ray by ``raysweep._raycompat.experiment_state``.

``<storage>`` is a local directory or a URI (``s3://bucket/runs``): the files are
read and written through a store (``raysweep.storage``), and a remote run keeps
its lock and the logs it appends to in a local staging directory, uploaded
while it runs (``raysweep.staging``).

Nothing here imports Ray, so the read-only commands (``status``, ``best``,
``list``, ``report``) stay fast on runs of any size.
"""

from __future__ import annotations

import json
import math
import os
import socket
import sys
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from raysweep._raycompat import experiment_state
from raysweep.errors import ResumeError, SweepError
from raysweep.results.formats import best_config_json, results_csv
from raysweep.results.records import SweepResult
from raysweep.rundir_base import EVENTS, LOG, STATE, TRIAL_INFO, USAGE, RunPlace
from raysweep.storage import FsStore, is_uri, local_path, open_location

if TYPE_CHECKING:  # pydantic and the config models load only when a spec is read or written
    from collections.abc import Sequence

    from raysweep.config.schema import SweepSpec

Status = Literal["running", "completed", "failed", "interrupted"]

TUNE_DIR = "tune"  # the run's first Ray Tune experiment
EXT_PREFIX = "tune-ext-"  # one more experiment per --num-samples extension
ITER = "training_iteration"  # a row's iteration in Ray's result.json
PROBE_DIR = "gpu_probe"  # gpus_per_trial "auto": the probe's own experiment
SPEC, MANIFEST, PACKING = "spec.json", "repro.json", "gpu_auto.json"
RESULTS, RESULTS_CSV, BEST = "results.json", "results.csv", "best_config.json"
REPORT, HTML_REPORT = "report.txt", "report.html"
LOCAL_DIR = "local"  # "execution": "local": the in-process executor's journal and error texts
JOURNAL = f"{LOCAL_DIR}/journal.jsonl"
MPS_RECORD, MPS_LOG_DIR = "mps_daemon.json", "mps_log"  # gpu_sharing "mps" (gpu/mps_daemon.py)


def utc_now() -> str:
    """Current time as an ISO-8601 UTC string with a Z suffix."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists on this host."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    """Whether ``pid`` has exited but is not reaped yet (Linux's /proc; False elsewhere).

    A driver killed with its process group is reparented to init, which may take
    seconds to reap it; until then ``kill(pid, 0)`` still succeeds.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    fields = stat.rsplit(")", 1)[-1].split()
    return bool(fields) and fields[0] == "Z"


def extension_dir(number: int) -> str:
    """Directory name of the ``number``-th extension (1-based)."""
    return f"{EXT_PREFIX}{number}"


@dataclass(frozen=True)
class Part:
    """One Ray Tune experiment of a run: its folder, trial count and first trial index."""

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


class RunDir(RunPlace):
    """A run directory: paths of its files, and typed reads and atomic writes of each.

    ``RunDir("runs/x")`` is a local directory; ``RunDir("s3://bucket/runs/x")`` a
    run on remote storage, shown and accepted back by its URI (``raysweep.rundir_base``).
    ``path`` is always local: the directory itself, or a remote run's staging
    directory, which holds only its lock, its logs before their upload and the GPU
    probe (the ``*_path`` properties of those files are under it).
    """

    # -- file paths --------------------------------------------------------------
    spec_path = property(lambda self: self.path / SPEC)
    state_path = property(lambda self: self.path / STATE)
    manifest_path = property(lambda self: self.path / MANIFEST)
    log_path = property(lambda self: self.path / LOG)
    results_path = property(lambda self: self.path / RESULTS)
    results_csv_path = property(lambda self: self.path / RESULTS_CSV)
    best_path = property(lambda self: self.path / BEST)
    report_path = property(lambda self: self.path / REPORT)
    html_report_path = property(lambda self: self.path / HTML_REPORT)
    usage_path = property(lambda self: self.path / USAGE)
    events_path = property(lambda self: self.path / EVENTS)
    trial_info_path = property(lambda self: self.path / TRIAL_INFO)
    packing_path = property(lambda self: self.path / PACKING)
    lock_path = property(lambda self: self.path / ".lock")
    probe_dir = property(lambda self: self.path / PROBE_DIR)
    journal_path = property(lambda self: self.path / JOURNAL)
    mps_record_path = property(lambda self: self.path / MPS_RECORD)
    mps_log_dir = property(lambda self: self.path / MPS_LOG_DIR)

    def error_path(self, trial_id: str) -> Path:
        """Where the in-process executor keeps a failed trial's error text."""
        return self.path / LOCAL_DIR / "errors" / f"{trial_id}.txt"

    def read_journal(self) -> list[dict[str, Any]]:
        """local/journal.jsonl: the in-process executor's suggestions and ended trials.

        A torn last line (a kill mid-write) is skipped: that trial is unfinished.
        """
        return _parse_jsonl(self.store.read_bytes(JOURNAL))

    def has_journal(self) -> bool:
        return self._has(JOURNAL)

    def is_run(self) -> bool:
        """Whether this looks like a raysweep run directory (it has state.json)."""
        return self._has(STATE)

    # -- spec.json ---------------------------------------------------------------
    def write_spec(self, spec: SweepSpec) -> None:
        """spec.json: the resolved spec and its sha256."""
        from raysweep.config.load import spec_hash, spec_to_json

        self.store.write_json(SPEC, {"sha256": spec_hash(spec), "spec": spec_to_json(spec)})

    def spec_sha256(self) -> str | None:
        """The sha256 recorded in spec.json (None without one)."""
        data = self._read_json(SPEC)
        return str(data["sha256"]) if data is not None else None

    def has_spec(self) -> bool:
        return self._has(SPEC)

    def read_spec(self) -> SweepSpec:
        """The spec the run was started with (ResumeError when missing or corrupt)."""
        from raysweep.config.schema import SweepSpec

        data = self.store.read_bytes(SPEC)
        if data is None:
            raise ResumeError(f"{self} is not a raysweep run directory (no spec.json)")
        try:
            return SweepSpec.model_validate(json.loads(data)["spec"])
        except (ValueError, KeyError, TypeError) as exc:
            raise ResumeError(
                f"{self.where(SPEC)} is unreadable or corrupt ({type(exc).__name__}: {exc})"
            ) from None

    # -- state.json --------------------------------------------------------------
    def read_state(self) -> dict[str, Any]:
        """state.json as a dict ({} when absent)."""
        return dict(self._read_json(STATE) or {})

    def mark(self, status: Status, **fields: Any) -> dict[str, Any]:
        """Set the run's status (and extra fields), recording this process as the driver."""
        state = self.read_state()
        now = utc_now()
        state.setdefault("created_at", now)
        state.setdefault("commands", [])
        state.update(status=status, updated_at=now, pid=os.getpid(), host=socket.gethostname())
        if status == "running":
            state["commands"].append({"argv": sys.argv, "at": now, "pid": os.getpid()})
            for stale in ("finished_at", "exit_code", "signal", "error"):
                state.pop(stale, None)
        else:
            state["finished_at"] = now
        state.update(fields)
        self.store.write_json(STATE, state)
        return state

    def update_state(self, **fields: Any) -> dict[str, Any]:
        """Set fields of state.json without touching the status."""
        state = self.read_state()
        state.update(fields, updated_at=utc_now())
        self.store.write_json(STATE, state)
        return state

    def effective_status(self, state: dict[str, Any] | None = None) -> str:
        """``crashed`` for a run marked running whose driver process is gone, else its status."""
        state = self.read_state() if state is None else state
        status = str(state.get("status", "unknown"))
        local = state.get("host") == socket.gethostname()
        if status == "running" and local and not pid_alive(int(state.get("pid", -1))):
            return "crashed"
        return status

    def write_warm_start(self, record: dict[str, Any]) -> None:
        """Record the run's warm-start points (``sweep run --warm-start``) in state.json.

        ``record``: ``{"source", "points", "notes"}``; a resume that has to start the
        first experiment again suggests the same points first.
        """
        self.update_state(warm_start=record)

    def read_warm_start(self, state: dict[str, Any] | None = None) -> dict[str, Any] | None:
        """The warm-start record of state.json (None for a run started without one)."""
        state = self.read_state() if state is None else state
        record = state.get("warm_start")
        return dict(record) if isinstance(record, dict) else None

    def parts(self, state: dict[str, Any] | None = None) -> list[Part]:
        """The run's Ray Tune experiments, oldest first (state.json's ``experiments``)."""
        state = self.read_state() if state is None else state
        return [Part.from_json(p) for p in state.get("experiments", [])]

    def set_parts(self, parts: list[Part]) -> None:
        self.update_state(experiments=[p.to_json() for p in parts])

    # -- Ray Tune's experiment folders, read without Ray (more in RunPlace) -----------
    def trial_rows(self, keys: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
        """Per trial id, every row it reported, in the order reported, each cut to ``keys``.

        Both engines: the in-process executor's journal and Ray's per-trial rows (a
        remote run's read from a staging copy of each experiment). A trial Ray ran
        again from its start (paused without a checkpoint) repeats its iterations.
        """
        rows: dict[str, list[dict[str, Any]]] = {}
        for record in self.read_journal():  # a run of the in-process executor
            if record.get("e") == "end" and isinstance(record.get("rows"), list):
                kept = [{k: r[k] for k in keys if k in r} for r in record["rows"]]
                rows[str(record["id"])] = kept
        for part in self.parts():
            with self.local_experiment(part, write_back=False) as exp_dir:
                rows.update(experiment_state.read_trial_rows(exp_dir, keys))
        return rows

    def trial_curves(self, metric: str) -> dict[str, list[tuple[int, float]]]:
        """Per trial id, its ``(training_iteration, metric)`` points (the last row of each)."""
        curves: dict[str, list[tuple[int, float]]] = {}
        for trial_id, rows in self.trial_rows((ITER, metric)).items():
            points = {int(r[ITER]): float(r[metric]) for r in rows if _point(r, metric)}
            curves[trial_id] = sorted(points.items())
        return curves

    # -- results -----------------------------------------------------------------
    def write_results(self, result: SweepResult) -> None:
        """results.json, results.csv and (when there is a best trial) best_config.json."""
        self.store.write_json(RESULTS, result.to_json())
        self._write_text(RESULTS_CSV, results_csv(result))
        best = result.best()
        if best is not None:
            self.store.write_json(BEST, best_config_json(result, best))

    def has_results(self) -> bool:
        return self._has(RESULTS)

    def read_results(self) -> SweepResult:
        """results.json as a SweepResult (SweepError before the run wrote one)."""
        data = self._read_json(RESULTS)
        if data is None:
            raise SweepError(f"{self}: no results.json yet (is the run finished?)")
        return SweepResult.from_json(data)

    def read_best(self) -> dict[str, Any] | None:
        """best_config.json (None when no trial reported the metric)."""
        data = self._read_json(BEST)
        return dict(data) if data is not None else None

    # -- report, usage, manifest, GPU packing ---------------------------------------
    def write_report(self, text: str) -> None:
        self._write_text(REPORT, text)

    def write_html_report(self, html: str) -> None:
        self._write_text(HTML_REPORT, html)

    def read_report(self) -> str:
        data = self.store.read_bytes(REPORT)
        if data is None:
            raise SweepError(f"{self}: no report.txt yet (is the run finished?)")
        return data.decode("utf-8")

    def read_usage(self) -> dict[str, Any] | None:
        """resource_usage.json (None when the run recorded none)."""
        data = self._read_staged(USAGE)
        return dict(json.loads(data)) if data is not None else None

    def has_manifest(self) -> bool:
        return self._has(MANIFEST)

    def read_manifest(self) -> dict[str, Any]:
        """repro.json ({} when the run has none)."""
        return dict(self._read_json(MANIFEST) or {})

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        self.store.write_json(MANIFEST, manifest)

    def read_packing(self) -> dict[str, Any] | None:
        """gpu_auto.json, the packing the GPU probe chose (None when there is none)."""
        data = self.store.read_bytes(PACKING)
        if data is None:
            return None
        try:
            record = dict(json.loads(data))
            if not 0 < float(record["gpus_per_trial"]) <= 1:
                raise ValueError(f"gpus_per_trial {record['gpus_per_trial']} is not in (0, 1]")
        except (ValueError, KeyError, TypeError) as exc:
            raise ResumeError(
                f"{self.where(PACKING)} is unreadable or corrupt ({type(exc).__name__}: {exc})"
            ) from None
        return record

    def write_packing(self, record: dict[str, Any]) -> None:
        self.store.write_json(PACKING, record)

    # -- append-only logs of the driver and the trials --------------------------------
    def read_events(self) -> list[dict[str, Any]]:
        """trials.jsonl: start/end events of every trial (a torn last line is skipped)."""
        return _parse_jsonl(self._read_staged(EVENTS))

    def read_trial_info(self) -> list[dict[str, Any]]:
        """trial_info.jsonl: what each trial process recorded (index, seed, devices)."""
        return _parse_jsonl(self._read_staged(TRIAL_INFO))


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The records of a JSON-lines file, skipping a torn or foreign line."""
    return _parse_jsonl(path.read_bytes() if path.is_file() else None)


def _parse_jsonl(data: bytes | None) -> list[dict[str, Any]]:
    """The records of JSON lines, skipping a torn or foreign line."""
    records: list[dict[str, Any]] = []
    for line in (data or b"").decode("utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


def _point(row: dict[str, Any], metric: str) -> bool:
    """Whether a result row has an iteration and a finite number for ``metric``."""
    value = row.get(metric)
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    return ok and isinstance(row.get(ITER), int)


def list_runs(storage: str | os.PathLike[str]) -> list[RunDir]:
    """Every run directory directly under ``storage`` (a directory or a URI), by name."""
    if is_uri(storage):
        location = open_location(os.fspath(storage))
        runs = [RunDir(location.child(name).uri) for name in FsStore(location).names()]
        return [run_dir for run_dir in runs if run_dir.is_run()]
    storage = local_path(storage)
    if not storage.is_dir():
        return []
    return [RunDir(p) for p in sorted(storage.iterdir()) if (p / STATE).is_file()]
