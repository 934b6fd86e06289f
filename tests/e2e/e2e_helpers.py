"""Helpers shared by the end-to-end tests: `sweep` processes, free ports, Debian tools.

Imported by the test modules as ``e2e_helpers`` (pyproject.toml's pytest ``pythonpath``
puts this directory on sys.path); not a test module itself.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Generic, TypeVar

import pytest

# the suite's one `sweep` environment and process-group kill, also offered from here
from factories import INHERITED_RAY, REPO, SWEEP, kill_group, make_sweep, sweep_env

_LOG_NUMBERS = itertools.count()
T = TypeVar("T")

# The crash-safety sweep of test_crash_resume.py and test_s3_storage.py: 6 trials of
# ~1.2 s each, one at a time, so a kill lands between or inside trials as intended.
CRASH_CONFIG: dict[str, Any] = make_sweep(
    name="crash",
    space={
        "x": {"type": "uniform", "low": -5, "high": 5},
        "y": {"type": "uniform", "low": -5, "high": 5},
        "steps": 4,
        "sleep_s": 0.3,
    },
    search={"algorithm": "random", "num_samples": 6, "max_concurrent": 1},
    seed=11,
)


def crash_config(path: Path, **changes: Any) -> Path:
    """:data:`CRASH_CONFIG` with top-level ``changes``, written to ``path``."""
    config = json.loads(json.dumps(CRASH_CONFIG))
    config.update(changes)
    path.write_text(json.dumps(config))
    return path


def wait_for(
    what: str, check: Callable[[], bool], proc: subprocess.Popen[str], timeout: float = 180
) -> None:
    """Poll ``check`` until it holds; fails naming ``what`` when ``proc`` exits first
    or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while not check():
        assert proc.poll() is None, f"the driver exited ({proc.returncode}) before: {what}"
        assert time.monotonic() < deadline, f"timed out waiting for: {what}"
        time.sleep(0.02)


def free_port() -> int:
    """A TCP port nothing listens on at 127.0.0.1 right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Sweeps:
    """`sweep` processes, each in its own session with its output in a log file under
    ``tmp``; :meth:`close` kills every group that was started."""

    def __init__(self, tmp: Path, env: Mapping[str, str] | None = None, cwd: Path = REPO) -> None:
        self.tmp, self.cwd = tmp, cwd
        self.env = dict(env) if env is not None else sweep_env()
        self.procs: list[subprocess.Popen[str]] = []
        self.logs: dict[int, Path] = {}

    def start(self, *args: str) -> subprocess.Popen[str]:
        path = self.tmp / f"sweep-{next(_LOG_NUMBERS)}-{args[0]}.log"
        with path.open("w") as log:
            proc = subprocess.Popen(
                [*SWEEP, *args],
                cwd=self.cwd,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                text=True,
                start_new_session=True,
            )
        self.procs.append(proc)
        self.logs[proc.pid] = path
        return proc

    def wait(self, proc: subprocess.Popen[str], timeout: float = 240) -> tuple[int, str]:
        """Exit code and output of ``proc``; its group is killed when it runs too long."""
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_group(proc)
            tail = self.output(proc)[-4000:]
            raise AssertionError(f"{proc.args} ran over {timeout} s; its output:\n{tail}") from None
        return code, self.output(proc)

    def run(self, *args: str, timeout: float = 240) -> tuple[int, str]:
        return self.wait(self.start(*args), timeout)

    def output(self, proc: subprocess.Popen[str]) -> str:
        return self.logs[proc.pid].read_text()

    kill_group = staticmethod(kill_group)

    def close(self) -> None:
        for proc in self.procs:
            kill_group(proc)


def debian_tool(binary: str, package: str | None = None) -> str:
    """``binary`` from PATH, installed with apt-get (Debian's ``package``) when missing;
    the test is skipped, saying why, when that cannot be done."""
    found = shutil.which(binary)
    if found:
        return found
    package = package or binary
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        pytest.skip(f"{binary} is not installed and apt-get cannot install it (not root)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-q", package]
    done = subprocess.run(install, env=env, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        subprocess.run(["apt-get", "update", "-q"], env=env, capture_output=True, timeout=600)
        done = subprocess.run(install, env=env, capture_output=True, text=True, timeout=900)
    found = shutil.which(binary)
    if done.returncode != 0 or not found:
        pytest.skip(f"apt-get install {package} failed: {done.stderr.strip()[-300:]}")
    return found


class Outcome(Generic[T]):
    """A scenario running in a thread of its own: :meth:`result` returns what it returned
    or raises what it raised (an assertion of the scenario fails the test that asks)."""

    def __init__(self, scenario: Callable[[], T], slots: threading.Semaphore | None = None) -> None:
        self._value: T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(scenario, slots), daemon=True)
        self._thread.start()

    def _run(self, scenario: Callable[[], T], slots: threading.Semaphore | None) -> None:
        try:
            with slots or contextlib.nullcontext():
                self._value = scenario()
        except BaseException as exc:  # pytest's fail and skip too: re-raised by result()
            self._error = exc

    def result(self, timeout: float = 600) -> T:
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise TimeoutError(f"the scenario still runs after {timeout} s")
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]


def together(
    scenarios: Mapping[Any, Callable[[], T]], at_once: int | None = None
) -> dict[Any, Outcome[T]]:
    """Start the scenarios, each in a thread, ``at_once`` at a time (default: all);
    their outcomes by key.

    For scenarios whose timing does not matter to what they check: they share the
    machine's cores, so each takes longer, all together less.
    """
    slots = threading.Semaphore(at_once) if at_once else None
    return {key: Outcome(scenario, slots) for key, scenario in scenarios.items()}


def settle(outcomes: Mapping[Any, Outcome[Any]]) -> None:
    """Wait for every scenario (a fixture's teardown: none outlives it); a failure is
    left to the test that asks for its outcome."""
    for outcome in outcomes.values():
        with contextlib.suppress(BaseException):
            outcome.result()


def submit_ray_job(
    dashboard_port: int, working_dir: Path, entrypoint: Sequence[str], env: Mapping[str, str]
) -> str:
    """``ray job submit --working-dir DIR -- ENTRYPOINT...`` on the loopback cluster whose
    dashboard listens on ``dashboard_port``: ``"exit code N\n"`` and the CLI's output."""
    ray_cli = Path(sys.executable).with_name("ray")
    deadline = time.monotonic() + 90
    while True:  # the head's job agent registers a while after the cluster is up
        done = subprocess.run(
            [str(ray_cli), "job", "submit", "--address", f"http://127.0.0.1:{dashboard_port}",
             "--working-dir", str(working_dir), "--", *entrypoint],
            cwd=working_dir, env=dict(env), capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        output = done.stdout + done.stderr
        if "No available agent" not in output or time.monotonic() > deadline:
            return f"exit code {done.returncode}\n{output}"
        time.sleep(3)


class LoopbackCluster:
    """A Ray cluster on 127.0.0.1 (cluster_node.py, one CPU per node): a head and
    ``workers`` worker nodes, run by ``python`` (another Ray's interpreter for the
    version tests) with ``env`` (default: this process's without :data:`INHERITED_RAY`,
    as a `sweep` process gets it), in its own session.

    :meth:`info` waits for both nodes: address, dashboard port and node ids (the
    head's first); :meth:`kill_worker` SIGKILLs every process of the worker node;
    :meth:`close` shuts the cluster down (SIGKILL when it does not go in a minute).
    """

    def __init__(
        self,
        python: str = sys.executable,
        env: Mapping[str, str] | None = None,
        workers: int = 1,
    ):
        if env is None:  # no token mode an in-process ray.init of this session set
            env = {k: v for k, v in os.environ.items() if k not in INHERITED_RAY}
        environment = {k: v for k, v in env.items() if k != "RAY_ADDRESS"}
        environment["PYTHONPATH"] = str(REPO / "src")  # the nodes run this tree's raysweep
        # a Ray Job's entrypoint (`sweep run`) is found on the nodes' PATH
        environment["PATH"] = os.pathsep.join([str(Path(python).parent), environment["PATH"]])
        environment.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        environment.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        self.proc = subprocess.Popen(
            [python, str(Path(__file__).with_name("cluster_node.py")), str(free_port()),
             str(workers)],
            cwd="/", env=environment, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True, start_new_session=True,
        )  # fmt: skip
        self._info: dict[str, Any] | None = None

    def _answer(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            self.close()
            pytest.fail("the test cluster did not start (or stopped answering)")
        return dict(json.loads(line))

    def info(self) -> dict[str, Any]:
        if self._info is None:
            self._info = self._answer()
        return self._info

    def kill_worker(self) -> dict[str, Any]:
        """SIGKILL the worker node's raylet, agents and workers; what was killed."""
        assert self.proc.stdin is not None
        self.info()
        self.proc.stdin.write("kill-worker\n")
        self.proc.stdin.flush()
        return self._answer()

    def close(self) -> None:
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            with contextlib.suppress(BrokenPipeError):
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            kill_group(self.proc)
