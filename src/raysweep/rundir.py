"""RunDir: the only owner of a run directory's layout and file formats.

Every file name of ``<storage>/<name>/`` is spelled here and nowhere else, and
every raysweep file in it is read and written through this class (JSON, never
pickle; writes are atomic: temp file + rename). Ray Tune's own experiment
folders (``tune/``, ``tune-ext-N/``) are named here too; what is inside them is
Ray's format, read without Ray by ``raysweep._raycompat.experiment_state``.

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
from raysweep.jsonio import read_json, write_json_atomic, write_text_atomic
from raysweep.report.export import best_config_json, results_csv
from raysweep.report.records import SweepResult

if TYPE_CHECKING:  # pydantic and the config models load only when a spec is read or written
    from raysweep.config.schema import SweepSpec

Status = Literal["running", "completed", "failed", "interrupted"]

TUNE_DIR = "tune"  # the run's first Ray Tune experiment
EXT_PREFIX = "tune-ext-"  # one more experiment per --num-samples extension
ITER = "training_iteration"  # a row's iteration in Ray's result.json
PROBE_DIR = "gpu_probe"  # gpus_per_trial "auto": the probe's own experiment


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


class RunDir:
    """A run directory: paths of its files, and typed reads and atomic writes of each."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"RunDir({str(self.path)!r})"

    def __str__(self) -> str:
        return str(self.path)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RunDir) and other.path == self.path

    def __hash__(self) -> int:
        return hash(self.path)

    @property
    def name(self) -> str:
        return self.path.name

    def resolved(self) -> RunDir:
        return RunDir(self.path.resolve())

    # -- file paths --------------------------------------------------------------
    spec_path = property(lambda self: self.path / "spec.json")
    state_path = property(lambda self: self.path / "state.json")
    manifest_path = property(lambda self: self.path / "repro.json")
    log_path = property(lambda self: self.path / "sweep_output.log")
    results_path = property(lambda self: self.path / "results.json")
    results_csv_path = property(lambda self: self.path / "results.csv")
    best_path = property(lambda self: self.path / "best_config.json")
    report_path = property(lambda self: self.path / "report.txt")
    html_report_path = property(lambda self: self.path / "report.html")
    usage_path = property(lambda self: self.path / "resource_usage.json")
    events_path = property(lambda self: self.path / "trials.jsonl")
    trial_info_path = property(lambda self: self.path / "trial_info.jsonl")
    packing_path = property(lambda self: self.path / "gpu_auto.json")
    lock_path = property(lambda self: self.path / ".lock")
    probe_dir = property(lambda self: self.path / PROBE_DIR)

    def experiment_path(self, part: Part | str) -> Path:
        """Ray Tune's experiment folder of ``part`` (``tune/``, ``tune-ext-N/``)."""
        return self.path / (part.dir if isinstance(part, Part) else part)

    def is_run(self) -> bool:
        """Whether this looks like a raysweep run directory (it has state.json)."""
        return self.state_path.is_file()

    # -- spec.json ---------------------------------------------------------------
    def write_spec(self, spec: SweepSpec) -> None:
        """spec.json: the resolved spec and its sha256."""
        from raysweep.config.load import spec_hash, spec_to_json

        write_json_atomic(self.spec_path, {"sha256": spec_hash(spec), "spec": spec_to_json(spec)})

    def spec_sha256(self) -> str | None:
        """The sha256 recorded in spec.json (None without one)."""
        return str(read_json(self.spec_path)["sha256"]) if self.spec_path.is_file() else None

    def has_spec(self) -> bool:
        return self.spec_path.is_file()

    def read_spec(self) -> SweepSpec:
        """The spec the run was started with (ResumeError when missing or corrupt)."""
        from raysweep.config.schema import SweepSpec

        if not self.spec_path.is_file():
            raise ResumeError(f"{self.path} is not a raysweep run directory (no spec.json)")
        try:
            return SweepSpec.model_validate(read_json(self.spec_path)["spec"])
        except (ValueError, KeyError, TypeError) as exc:
            raise ResumeError(
                f"{self.spec_path} is unreadable or corrupt ({type(exc).__name__}: {exc})"
            ) from None

    # -- state.json --------------------------------------------------------------
    def read_state(self) -> dict[str, Any]:
        """state.json as a dict ({} when absent)."""
        return dict(read_json(self.state_path)) if self.state_path.is_file() else {}

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
        write_json_atomic(self.state_path, state)
        return state

    def update_state(self, **fields: Any) -> dict[str, Any]:
        """Set fields of state.json without touching the status."""
        state = self.read_state()
        state.update(fields, updated_at=utc_now())
        write_json_atomic(self.state_path, state)
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

    def modified_at(self) -> float:
        """When the run last changed (epoch seconds): its directory's mtime.

        Every state change renames a new state.json into the directory, which sets
        the directory's mtime; ``touch -d`` on the directory sets it too.
        """
        return self.path.stat().st_mtime

    def parts(self, state: dict[str, Any] | None = None) -> list[Part]:
        """The run's Ray Tune experiments, oldest first (state.json's ``experiments``)."""
        state = self.read_state() if state is None else state
        return [Part.from_json(p) for p in state.get("experiments", [])]

    def set_parts(self, parts: list[Part]) -> None:
        self.update_state(experiments=[p.to_json() for p in parts])

    # -- Ray Tune's experiment folders, read without Ray ----------------------------
    def trial_states(self, part: Part) -> list[dict[str, Any]]:
        """Trial id, status and config of each trial in the part's newest snapshot."""
        return experiment_state.read_trial_states(self.experiment_path(part))

    def trial_curves(self, metric: str) -> dict[str, list[tuple[int, float]]]:
        """Per trial id, its ``(training_iteration, metric)`` points from Ray's per-trial rows."""
        curves: dict[str, list[tuple[int, float]]] = {}
        for part in self.parts():
            rows = experiment_state.read_trial_rows(self.experiment_path(part), (ITER, metric))
            for trial_id, trial_rows in rows.items():
                points = {int(r[ITER]): float(r[metric]) for r in trial_rows if _point(r, metric)}
                curves[trial_id] = sorted(points.items())
        return curves

    def has_snapshot(self, part: Part) -> bool:
        """Whether Ray saved at least one experiment snapshot for the part."""
        return experiment_state.newest_state_file(self.experiment_path(part)) is not None

    # -- results -----------------------------------------------------------------
    def write_results(self, result: SweepResult) -> None:
        """results.json, results.csv and (when there is a best trial) best_config.json."""
        write_json_atomic(self.results_path, result.to_json())
        write_text_atomic(self.results_csv_path, results_csv(result))
        best = result.best()
        if best is not None:
            write_json_atomic(self.best_path, best_config_json(result, best))

    def has_results(self) -> bool:
        return self.results_path.is_file()

    def read_results(self) -> SweepResult:
        """results.json as a SweepResult (SweepError before the run wrote one)."""
        if not self.results_path.is_file():
            raise SweepError(f"{self.path}: no results.json yet (is the run finished?)")
        return SweepResult.from_json(read_json(self.results_path))

    def read_best(self) -> dict[str, Any] | None:
        """best_config.json (None when no trial reported the metric)."""
        return dict(read_json(self.best_path)) if self.best_path.is_file() else None

    # -- report, usage, manifest, GPU packing ---------------------------------------
    def write_report(self, text: str) -> None:
        write_text_atomic(self.report_path, text)

    def write_html_report(self, html: str) -> None:
        write_text_atomic(self.html_report_path, html)

    def read_report(self) -> str:
        if not self.report_path.is_file():
            raise SweepError(f"{self.path}: no report.txt yet (is the run finished?)")
        return self.report_path.read_text(encoding="utf-8")

    def read_usage(self) -> dict[str, Any] | None:
        """resource_usage.json (None when the run recorded none)."""
        return dict(read_json(self.usage_path)) if self.usage_path.is_file() else None

    def read_manifest(self) -> dict[str, Any]:
        """repro.json ({} when the run has none)."""
        return dict(read_json(self.manifest_path)) if self.manifest_path.is_file() else {}

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        write_json_atomic(self.manifest_path, manifest)

    def read_packing(self) -> dict[str, Any] | None:
        """gpu_auto.json, the packing the GPU probe chose (None when there is none)."""
        if not self.packing_path.is_file():
            return None
        try:
            record = dict(read_json(self.packing_path))
            if not 0 < float(record["gpus_per_trial"]) <= 1:
                raise ValueError(f"gpus_per_trial {record['gpus_per_trial']} is not in (0, 1]")
        except (ValueError, KeyError, TypeError) as exc:
            raise ResumeError(
                f"{self.packing_path} is unreadable or corrupt ({type(exc).__name__}: {exc})"
            ) from None
        return record

    def write_packing(self, record: dict[str, Any]) -> None:
        write_json_atomic(self.packing_path, record)

    # -- append-only logs of the driver and the trials --------------------------------
    def read_events(self) -> list[dict[str, Any]]:
        """trials.jsonl: start/end events of every trial (a torn last line is skipped)."""
        return read_jsonl(self.events_path)

    def read_trial_info(self) -> list[dict[str, Any]]:
        """trial_info.jsonl: what each trial process recorded (index, seed, devices)."""
        return read_jsonl(self.trial_info_path)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The records of a JSON-lines file, skipping a torn or foreign line."""
    if not path.is_file():
        return []
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
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


def list_runs(storage: Path) -> list[RunDir]:
    """Every run directory directly under ``storage``, by name."""
    if not storage.is_dir():
        return []
    return [RunDir(p) for p in sorted(storage.iterdir()) if (p / "state.json").is_file()]
