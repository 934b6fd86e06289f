"""An address where no Ray cluster answers: exit 2 naming it, in bounded time, nothing written.

`sweep run --address`, `RAY_ADDRESS` and `sweep resume --address` on a port nothing
listens on, and on a port that accepts connections but never answers (a service
that is not Ray's, or a hung head: Ray's own client waited 40 s per attempt there,
20 attempts). A SIGTERM or Ctrl-C while connecting ends the command with 130.
Real processes, real sockets on 127.0.0.1; no cluster needed.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from e2e_helpers import SWEEP, free_port, wait_for

from factories import SilentPort, quadratic_sweep, run_sweep_cli, sweep_env
from raysweep.api import RunOptions, load_run_spec
from raysweep.rundir import RunDir

pytestmark = pytest.mark.slow
BOUND_S = 60  # the default limit: every command here must end well within it


@pytest.fixture()
def config(tmp_path: Path) -> Path:
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(quadratic_sweep(name="unreachable")))
    return path


@pytest.fixture()
def interrupted_run(tmp_path: Path, config: Path) -> RunDir:
    """A run directory as a run interrupted before its first trial leaves it."""
    run_dir = RunDir(tmp_path / "made" / "unreachable")
    run_dir.create()
    run_dir.write_spec(load_run_spec(RunOptions(config=config)))
    run_dir.mark("interrupted")
    return run_dir


def _files(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _refused(output: str, address: str, symptom: str) -> None:
    first = output.strip().splitlines()[0]
    assert first.startswith(f"error: cannot join the Ray cluster at {address}: "), output
    assert symptom in first, output
    for cause in ("nothing listens", "a firewall", "Ray this driver's Ray cannot talk to"):
        assert cause in output, output
    assert "--connect-timeout" in output and "Traceback" not in output


def test_a_dead_address_exits_2_at_once_naming_it(
    tmp_path: Path, config: Path, interrupted_run: RunDir
) -> None:
    dead = f"127.0.0.1:{free_port()}"
    storage = tmp_path / "runs"
    ray_tmp = tmp_path / "ray"  # a Ray started by the command would keep its session here
    before = _files(interrupted_run.path)
    commands = {
        "--address": (["run", "--config", str(config), "--storage", str(storage),
                       "--address", dead], {}),
        "RAY_ADDRESS": (["run", "--config", str(config), "--storage", str(storage)],
                        {"RAY_ADDRESS": dead}),
        "resume --address": (["resume", str(interrupted_run.path), "--address", dead], {}),
    }  # fmt: skip
    for how, (args, env) in commands.items():
        done = run_sweep_cli(*args, env={"RAY_TMPDIR": str(ray_tmp), **env}, timeout=BOUND_S)
        assert done.returncode == 2, (how, done.stdout + done.stderr)
        _refused(done.stderr, dead, "(connection refused)")
    assert not storage.exists() and not ray_tmp.exists()
    assert _files(interrupted_run.path) == before  # the resumed run: not a byte changed


def test_an_address_that_never_answers_gives_up_at_the_set_limit(
    tmp_path: Path, config: Path, interrupted_run: RunDir
) -> None:
    storage = tmp_path / "runs"
    before = _files(interrupted_run.path)
    with SilentPort() as silent:
        by_flag = run_sweep_cli(
            "run", "--config", str(config), "--storage", str(storage),
            "--address", silent.address, "--connect-timeout", "2", timeout=BOUND_S,
        )  # fmt: skip
        by_env = run_sweep_cli(
            "resume", str(interrupted_run.path), "--address", silent.address,
            env={"RAYSWEEP_CONNECT_TIMEOUT_S": "2"}, timeout=BOUND_S,
        )  # fmt: skip
        assert silent.accepted >= 2  # each got through to the port: the limit ended it
    for done in (by_flag, by_env):
        assert done.returncode == 2, done.stdout + done.stderr
        _refused(done.stderr, silent.address, "something accepts connections there")
        assert "in 2 s" in done.stderr
    assert not storage.exists()
    assert _files(interrupted_run.path) == before


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=lambda s: s.name)
def test_a_signal_while_connecting_ends_the_command_with_130(
    tmp_path: Path, config: Path, sig: signal.Signals
) -> None:
    storage = tmp_path / "runs"
    log = tmp_path / "sweep.log"
    with SilentPort() as silent, log.open("w") as out:
        proc = subprocess.Popen(
            [*SWEEP, "run", "--config", str(config), "--storage", str(storage),
             "--address", silent.address],
            env=sweep_env(), stdout=out, stderr=subprocess.STDOUT, text=True,
            start_new_session=True,
        )  # fmt: skip
        try:
            # the TCP check, then Ray's GCS client: the command now waits on the port
            wait_for("the driver connecting", lambda: silent.accepted >= 2, proc, timeout=60)
            time.sleep(0.5)
            os.kill(proc.pid, sig)
            code = proc.wait(timeout=10)  # the bound asked for: 10 s
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    output = log.read_text()
    assert code == 130, output
    assert "interrupted" in output and "Traceback" not in output
    assert not storage.exists()


@pytest.mark.parametrize(
    ("flag", "env", "named"),
    [
        (["--connect-timeout", "0"], {}, "--connect-timeout 0: expected a number of seconds > 0"),
        ([], {"RAYSWEEP_CONNECT_TIMEOUT_S": "soon"}, "RAYSWEEP_CONNECT_TIMEOUT_S=soon"),
    ],
    ids=["flag", "variable"],
)
def test_a_bad_time_limit_exits_2_naming_it(
    tmp_path: Path, config: Path, flag: list[str], env: dict[str, str], named: str
) -> None:
    done = run_sweep_cli(
        "run", "--config", str(config), "--storage", str(tmp_path / "runs"),
        "--address", f"127.0.0.1:{free_port()}", *flag, env=env,
    )  # fmt: skip
    assert done.returncode == 2 and named in done.stderr, done.stderr
    assert not (tmp_path / "runs").exists()
