"""The sweep's own MPS control daemon: started before Ray, stopped after it, cleaned after kill -9.

One daemon per sweep, with its own pipe directory (a short per-run path under the
system temp dir: the daemon's UNIX sockets must stay under the 108-byte path limit,
which a run directory may not) and its log directory in the run directory. Its pid,
uid, host and pipe directory go to ``mps_daemon.json`` in the run directory as it
starts, so the next ``sweep run --resume`` or ``sweep resume`` of that run stops a
daemon a killed driver left behind (only one that is still that daemon: same host,
same uid, an ``nvidia-cuda-mps-control`` process whose pid file in the recorded pipe
directory names it).

The daemon sees every GPU (``CUDA_VISIBLE_DEVICES`` unset for it): clients keep the
physical device numbers Ray gives them, which a daemon restricted to some GPUs would
renumber. Trials become its clients through ``CUDA_MPS_PIPE_DIRECTORY``, exported
here before Ray starts its workers (``RAYSWEEP_GPU_SHARING=mps`` tells the trainable
wrapper to set each trial's limits, ``gpu/mps.py``).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from raysweep.errors import GPUError
from raysweep.gpu.mps import CONTROL_BINARY, LOG_ENV, PIPE_ENV, SHARING_ENV
from raysweep.jsonio import read_json, write_json_atomic
from raysweep.rundir import RunDir, pid_alive, utc_now

SERVER_BINARY = "nvidia-cuda-mps-server"  # started by the daemon for its clients
PID_FILE = "nvidia-cuda-mps-control.pid"  # written by the daemon into its pipe directory
_START_WAIT_S = 10.0
_STOP_WAIT_S = 15.0


def pipe_directory(run_path: Path) -> Path:
    """The run's MPS pipe directory: short, per user and per run directory."""
    digest = hashlib.sha1(str(run_path.resolve()).encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"raysweep-mps-{os.getuid()}-{digest}"


def read_record(run_dir: RunDir) -> dict[str, Any] | None:
    """The recorded daemon of this run (None when none was recorded or the file is unreadable)."""
    try:
        record = read_json(run_dir.mps_record_path)
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def is_our_daemon(record: dict[str, Any]) -> bool:
    """Whether ``record`` names a live MPS control daemon of this user on this host.

    A recycled pid is not taken for the daemon: the process must be
    ``nvidia-cuda-mps-control`` and its pipe directory's pid file must name it.
    """
    pid = record.get("pid")
    if not isinstance(pid, int) or record.get("host") != socket.gethostname():
        return False
    if record.get("uid") != os.getuid() or not pid_alive(pid):
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()
        named = int((Path(str(record.get("pipe_dir"))) / PID_FILE).read_text().strip())
    except (OSError, ValueError):
        return False
    return os.path.basename(cmdline) == CONTROL_BINARY and named == pid


def cleanup_stale(run_dir: RunDir) -> int | None:
    """Stop the daemon an earlier, killed driver of this run left running; returns its pid.

    A record whose daemon is gone (or is not ours) is just removed.
    """
    record = read_record(run_dir)
    if record is None:
        return None
    stopped = None
    if is_our_daemon(record):
        _quit(Path(record["pipe_dir"]), int(record["pid"]))
        stopped = int(record["pid"])
    run_dir.mps_record_path.unlink(missing_ok=True)
    return stopped


def start_daemon(run_dir: RunDir, binary: str) -> dict[str, Any]:
    """Start the run's control daemon (``-d``) and record it; GPUError when it does not start."""
    pipe_dir = pipe_directory(run_dir.path)
    log_dir = run_dir.mps_log_dir
    # Sockets a killed daemon left would stand in the new one's way; the run's lock
    # means no other driver of this run has a daemon on them (cleanup_stale ran first).
    shutil.rmtree(pipe_dir, ignore_errors=True)
    pipe_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    log_dir.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    env.update({PIPE_ENV: str(pipe_dir), LOG_ENV: str(log_dir), "CUDA_DEVICE_ORDER": "PCI_BUS_ID"})
    started = log_dir / "start.log"  # a file, not a pipe: the daemon may keep its fds open
    try:
        with started.open("w", encoding="utf-8") as out:
            done = subprocess.run([binary, "-d"], env=env, stdin=subprocess.DEVNULL, stdout=out,
                                  stderr=subprocess.STDOUT, timeout=_START_WAIT_S)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GPUError(f"resources.gpu_sharing: could not start {binary}: {exc}") from exc
    pid = _wait_for_pid(pipe_dir / PID_FILE) if done.returncode == 0 else None
    if done.returncode != 0 or pid is None:
        said = started.read_text(encoding="utf-8", errors="replace").strip()
        why = said.splitlines()[-1] if said else f"exit code {done.returncode}"
        raise GPUError(
            f"resources.gpu_sharing: {binary} -d did not start a daemon ({why}); "
            f"see {log_dir}/control.log"
        )
    record = {
        "pid": pid,
        "uid": os.getuid(),
        "host": socket.gethostname(),
        "pipe_dir": str(pipe_dir),
        "log_dir": str(log_dir),
        "started_at": utc_now(),
        "driver_pid": os.getpid(),
    }
    write_json_atomic(run_dir.mps_record_path, record)
    return record


def stop_daemon(run_dir: RunDir, record: dict[str, Any]) -> None:
    """Stop the daemon ``start_daemon`` started and forget it."""
    _quit(Path(record["pipe_dir"]), int(record["pid"]))
    run_dir.mps_record_path.unlink(missing_ok=True)


@contextmanager
def mps_sharing(
    run_dir: RunDir, binary: str, gpu: int, say: Callable[[str], None]
) -> Iterator[dict[str, Any]]:
    """While the block runs, the run's daemon serves this process's future Ray workers.

    A CUDA client on GPU ``gpu`` must get a context through it first (GPUError
    otherwise, the daemon stopped: ``gpu/mps_probe.py``). On the way out (normal
    end, an exception, Ctrl-C or SIGTERM unwinding) stops the daemon and restores
    the environment. A stale daemon of the run is :func:`cleanup_stale`'s
    (``gpu/sharing.py`` calls it first).
    """
    from raysweep.gpu.mps_probe import probe_client

    record = start_daemon(run_dir, binary)
    failed = probe_client(record["pipe_dir"], gpu)
    if failed is not None:
        stop_daemon(run_dir, record)
        raise GPUError(
            f"resources.gpu_sharing: the MPS daemon started but a CUDA client could not use "
            f"it ({failed}); see {record['log_dir']}/control.log"
        )
    say(f"GPU sharing: NVIDIA MPS (control daemon pid {record['pid']}, pipes {record['pipe_dir']})")
    saved = {k: os.environ.get(k) for k in (PIPE_ENV, LOG_ENV, SHARING_ENV)}
    os.environ.update(
        {PIPE_ENV: record["pipe_dir"], LOG_ENV: record["log_dir"], SHARING_ENV: "mps"}
    )
    try:
        yield record
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        stop_daemon(run_dir, record)


def _wait_for_pid(path: Path) -> int | None:
    deadline = time.monotonic() + _START_WAIT_S
    while time.monotonic() < deadline:
        try:
            text = path.read_text().strip()
        except OSError:
            text = ""
        if text.isdigit():
            return int(text)
        time.sleep(0.05)
    return None


def _quit(pipe_dir: Path, pid: int) -> None:
    """``echo quit | nvidia-cuda-mps-control`` on the daemon's pipes; SIGTERM, then SIGKILL.

    A server the daemon leaves behind (it was killed before its clients exited) is
    stopped the same way: any ``nvidia-cuda-mps-server`` of this user on these pipes.
    """
    env = {**os.environ, PIPE_ENV: str(pipe_dir)}
    with suppress(OSError, subprocess.TimeoutExpired):
        subprocess.run(
            [CONTROL_BINARY], input="quit\n", env=env, capture_output=True, text=True,
            timeout=_STOP_WAIT_S,
        )  # fmt: skip
    _end(pid)
    for server in _servers_on(pipe_dir):
        _end(server)


def _end(pid: int) -> None:
    """Wait for ``pid`` to exit, then SIGTERM it, then SIGKILL it."""
    for sig in (None, signal.SIGTERM, signal.SIGKILL):
        if sig is not None and pid_alive(pid):
            with suppress(OSError):
                os.kill(pid, sig)
        deadline = time.monotonic() + _STOP_WAIT_S / 3
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if not pid_alive(pid):
            return


def _servers_on(pipe_dir: Path) -> list[int]:
    """Pids of this user's ``nvidia-cuda-mps-server`` processes using ``pipe_dir``."""
    wanted = f"{PIPE_ENV}={pipe_dir}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid != os.getuid():
                continue
            name = (entry / "cmdline").read_bytes().split(b"\0")[0]
            if os.path.basename(name.decode(errors="replace")) != SERVER_BINARY:
                continue
            if wanted in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found
