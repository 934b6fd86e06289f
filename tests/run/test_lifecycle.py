"""run/lifecycle.py: the state.json status and exit code at each end of a run, and what a
run records when it starts, on a real run directory (no Ray)."""

from __future__ import annotations

import io
import signal
from pathlib import Path

import pytest

from factories import make_spec
from raysweep.errors import LockError
from raysweep.gpu.allocation import GPUPlan
from raysweep.output_log import RunLog
from raysweep.results.records import SweepResult, TrialRecord
from raysweep.run.lifecycle import INTERRUPTED, drive_locked, start_run
from raysweep.run.lock import RunLock
from raysweep.run.signals import GracefulStop
from raysweep.rundir import RunDir
from raysweep.search.points import WarmStart

CPU_PLAN = GPUPlan(physical_ids=(), num_gpus=0, cpu_fallback=False)


def result(*statuses: str) -> SweepResult:
    """A sweep whose trials ended with ``statuses``."""
    trials = [
        TrialRecord(f"t{i}", i, status, {"x": 0.5}, i, 1, {"loss": 1.0}, 1.0)  # type: ignore[arg-type]
        for i, status in enumerate(statuses)
    ]
    return SweepResult("small", "loss", "min", trials)


@pytest.mark.parametrize(
    ("statuses", "code", "status"),
    [(("completed", "errored"), 0, "completed"), (("errored",), 1, "failed")],
)
def test_the_exit_code_follows_the_trials_that_succeeded(
    tmp_path: Path, statuses: tuple[str, ...], code: int, status: str
) -> None:
    run_dir, out = RunDir(tmp_path / "run"), io.StringIO()

    def body(log: RunLog) -> SweepResult:
        with pytest.raises(LockError, match="being driven by another process"):
            RunLock(run_dir.lock_path).acquire()  # held while the body runs
        return result(*statuses)

    assert drive_locked(run_dir, out, GracefulStop(), body) == code
    state = run_dir.read_state()
    assert state["status"] == status and state["exit_code"] == code
    assert f"Results: {run_dir}" in out.getvalue()
    RunLock(run_dir.lock_path).acquire().release()  # released at the end


def test_an_interrupt_is_resumable_and_names_the_signal(tmp_path: Path) -> None:
    run_dir, out, stop = RunDir(tmp_path / "run"), io.StringIO(), GracefulStop()
    stop.received = signal.SIGTERM

    def body(log: RunLog) -> SweepResult:
        raise KeyboardInterrupt

    assert drive_locked(run_dir, out, stop, body) == INTERRUPTED == 130
    state = run_dir.read_state()
    assert state["status"] == "interrupted" and state["signal"] == "SIGTERM"
    assert f"sweep resume {run_dir}" in out.getvalue()


def test_an_error_marks_the_run_failed_and_propagates(tmp_path: Path) -> None:
    run_dir = RunDir(tmp_path / "run")

    def body(log: RunLog) -> SweepResult:
        raise ValueError("bad shard 7")

    with pytest.raises(ValueError, match="bad shard 7"):
        drive_locked(run_dir, io.StringIO(), GracefulStop(), body)
    assert run_dir.read_state()["status"] == "failed"
    assert run_dir.read_state()["error"] == "ValueError: bad shard 7"


def test_start_run_records_spec_warm_start_and_manifest(tmp_path: Path) -> None:
    run_dir, spec = RunDir(tmp_path / "run"), make_spec(seed=9)
    run_dir.path.mkdir()
    warm = WarmStart("export.json", ({"x": 0.25},), ())
    start_run(run_dir, spec, CPU_PLAN, record=spec, warm_start=warm, record_warm_start=True)
    assert run_dir.read_state()["status"] == "running"
    assert run_dir.read_spec() == spec
    assert run_dir.read_warm_start() == warm.to_json()
    assert run_dir.read_manifest()["master_seed"] == 9


def test_a_resumed_start_keeps_what_was_recorded(tmp_path: Path) -> None:
    run_dir, first = RunDir(tmp_path / "run"), make_spec(seed=9)
    run_dir.path.mkdir()
    start_run(run_dir, first, CPU_PLAN, record=first)
    manifest = run_dir.read_manifest()
    warm = WarmStart("export.json", ({"x": 0.25},), ())
    start_run(run_dir, make_spec(seed=10), CPU_PLAN, warm_start=warm)  # no record: a resume
    assert run_dir.read_spec() == first and run_dir.read_manifest() == manifest
    assert run_dir.read_warm_start() is None
