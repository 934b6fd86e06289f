"""MPS limits from a fraction, availability where MPS cannot run, and the daemon record's cleanup.

No NVML or MPS is faked: the "no binary" and "no GPU" paths are this machine's when
it has neither; the stale-daemon checks use real processes that are not MPS daemons
(a dead pid, a live process of another program), which must never be stopped.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from raysweep.errors import ConfigError
from raysweep.gpu import mps, mps_daemon
from raysweep.gpu.allocation import GPUPlan
from raysweep.gpu.sharing import check_requested_mps, decide_sharing, gpu_sharing
from raysweep.jsonio import write_json_atomic
from raysweep.rundir import RunDir

STATUS = mps.mps_status()


def test_limits_follow_the_fraction_with_headroom() -> None:
    assert mps.thread_percentage(0.25) == 25
    assert mps.thread_percentage(0.125) == 13  # rounded up to a whole percent
    assert mps.thread_percentage(1.0) == 100 and mps.thread_percentage(2.0) == 100
    assert mps.memory_limit_mb(0.25, 81559.0) == int(0.25 * 0.95 * 81559.0)
    assert mps.memory_limit_mb(1.0, 81559.0) is None
    env = mps.client_env(0.25, [80000.0, 40000.0])
    assert env == {
        mps.THREADS_ENV: "25",
        mps.MEMORY_ENV: f"0={int(0.25 * 0.95 * 80000)}MB,1={int(0.25 * 0.95 * 40000)}MB",
    }
    assert mps.client_env(1.0, [80000.0]) == {mps.THREADS_ENV: "100"}


def test_limits_are_set_only_for_the_sweeps_mps_clients(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(mps.SHARING_ENV, raising=False)
    monkeypatch.delenv(mps.THREADS_ENV, raising=False)
    assert mps.apply_client_limits(0.25, ("0",)) == {}
    assert mps.THREADS_ENV not in os.environ
    monkeypatch.setenv(mps.SHARING_ENV, "mps")
    applied = mps.apply_client_limits(0.25, ("0",))
    assert applied[mps.THREADS_ENV] == "25" and os.environ[mps.THREADS_ENV] == "25"


@pytest.mark.skipif(STATUS.available, reason="MPS is available on this machine")
def test_unavailable_says_why_in_one_line() -> None:
    assert STATUS.reason and "\n" not in STATUS.reason
    if mps.find_control_binary() is None:
        assert STATUS.reason == "nvidia-cuda-mps-control is not on PATH"
    text = mps.format_mps(STATUS)
    assert text.startswith("MPS: not available (") and STATUS.reason in text


@pytest.mark.skipif(STATUS.available, reason="MPS is available on this machine")
def test_requested_mps_is_refused_and_auto_falls_back() -> None:
    with pytest.raises(ConfigError, match=r"resources.gpu_sharing: 'mps' is not available: "):
        check_requested_mps("mps", 0.25, on_cluster=False)
    check_requested_mps("auto", 0.25, on_cluster=False)  # never refused
    check_requested_mps("time-slice", 0.25, on_cluster=False)
    plan = decide_sharing(GPUPlan((), 0, True), "auto", 0.25, on_cluster=False)
    assert plan.gpu_sharing == "time-slice" and plan.sharing_requested == "auto"
    assert plan.sharing_note and plan.sharing_note.startswith(
        "note: GPU sharing: time-slicing (MPS not available: "
    )
    with pytest.raises(ConfigError, match="no GPU is used"):
        decide_sharing(GPUPlan((), 0, True), "mps", 0.25, on_cluster=False)


def test_time_slice_and_cpu_only_auto_say_nothing() -> None:
    plan = decide_sharing(GPUPlan((), 0, False), "time-slice", 0.25, on_cluster=False)
    assert plan.sharing_note is None and plan.gpu_sharing == "time-slice"
    quiet = decide_sharing(GPUPlan((), 0, False), "auto", 0.0, on_cluster=False)
    assert quiet.sharing_note is None and quiet.gpu_sharing == "time-slice"


def test_pipe_directory_is_short_and_per_run(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 120) / "run"
    pipe = mps_daemon.pipe_directory(deep)
    assert len(str(pipe / "control")) < 100  # UNIX socket paths stop at 108 bytes
    assert pipe != mps_daemon.pipe_directory(tmp_path / "other")
    assert pipe == mps_daemon.pipe_directory(deep)


def _record(run_dir: RunDir, pid: int, pipe_dir: Path) -> None:
    run_dir.path.mkdir(parents=True, exist_ok=True)
    write_json_atomic(
        run_dir.mps_record_path,
        {"pid": pid, "uid": os.getuid(), "host": socket.gethostname(), "pipe_dir": str(pipe_dir)},
    )


def test_a_record_of_a_dead_daemon_is_removed(tmp_path: Path) -> None:
    run_dir = RunDir(tmp_path / "run")
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    _record(run_dir, gone.pid, tmp_path / "pipes")
    assert mps_daemon.cleanup_stale(run_dir) is None
    assert not run_dir.mps_record_path.exists()


def test_a_recycled_pid_is_never_stopped(tmp_path: Path) -> None:
    """A live process that is not the recorded daemon (pid reused) survives the cleanup."""
    run_dir = RunDir(tmp_path / "run")
    pipes = tmp_path / "pipes"
    pipes.mkdir()
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (pipes / mps_daemon.PID_FILE).write_text(str(other.pid))  # even with the pid file
        _record(run_dir, other.pid, pipes)
        assert not mps_daemon.is_our_daemon(mps_daemon.read_record(run_dir) or {})
        assert mps_daemon.cleanup_stale(run_dir) is None
        assert other.poll() is None  # still running
        assert not run_dir.mps_record_path.exists()
    finally:
        other.kill()
        other.wait()


def test_sharing_session_without_mps_starts_nothing(tmp_path: Path) -> None:
    run_dir = RunDir(tmp_path / "run")
    run_dir.path.mkdir()
    said: list[str] = []
    plan = GPUPlan((), 0, True, sharing_requested="auto", sharing_note="note: x")
    with gpu_sharing(run_dir, plan, said.append) as used:
        assert used == "time-slice"
        assert os.environ.get(mps.SHARING_ENV) != "mps"
    assert said == ["note: x"]
    assert not run_dir.mps_log_dir.exists() and not run_dir.mps_record_path.exists()


def _has_libcuda() -> bool:
    import ctypes

    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


@pytest.mark.skipif(_has_libcuda(), reason="this machine has the CUDA driver")
def test_the_client_probe_says_why_a_client_cannot_start(tmp_path: Path) -> None:
    from raysweep.gpu.mps_probe import probe_client

    why = probe_client(str(tmp_path), 0)
    assert why is not None and why.startswith("CUDA client under MPS: ")
    assert "libcuda.so.1" in why


def test_a_daemon_that_does_not_start_is_a_gpu_error_naming_why(tmp_path: Path) -> None:
    """A control program that exits at once (here /bin/false) leaves no record behind."""
    from raysweep.errors import GPUError

    run_dir = RunDir(tmp_path / "run")
    run_dir.path.mkdir()
    with pytest.raises(GPUError, match=r"/bin/false -d did not start a daemon \(exit code 1\)"):
        mps_daemon.start_daemon(run_dir, "/bin/false")
    assert not run_dir.mps_record_path.exists()
    assert (run_dir.mps_log_dir / "start.log").exists()
