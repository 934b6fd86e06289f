"""A cluster started with Ray's token authentication (``RAY_AUTH_MODE=token``), on loopback.

Without the token, or with a wrong one, `sweep run --address` and `sweep resume
--address` exit 2 at once with one message saying the cluster wants its token
and how to give it, writing nothing; with it they run. A Ray Job is submitted
only with the token, and its sweep then runs on the cluster's. The token never
appears in the run directory or in any output. One single-node cluster for the
whole module; each client has a home of its own (no ``~/.ray/auth_token``).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import pytest
from e2e_helpers import LoopbackCluster, submit_ray_job, together

from factories import quadratic_sweep, run_sweep_cli, sweep_env
from raysweep.rundir import RunDir

pytestmark = pytest.mark.slow

TOKEN = secrets.token_hex(32)
WRONG = secrets.token_hex(32)
AUTH_VARS = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")

TRAINABLE = textwrap.dedent(
    """
    from ray import tune

    def fit(config):
        for step in range(2):
            tune.report({"loss": (config["x"] - 1.0) ** 2 + 1.0 / (step + 1)})
    """
)


def _without_auth(env: dict[str, str], home: Path) -> dict[str, str]:
    env = {k: v for k, v in env.items() if k not in AUTH_VARS}
    env["HOME"] = str(home)
    return env


@dataclass(frozen=True)
class TokenCluster:
    """The cluster, a user's project beside it and the token in a file only its owner reads."""

    address: str
    dashboard_port: int
    project: Path
    token_file: Path
    home: Path

    def client_env(self, **auth: str) -> dict[str, str]:
        """A `sweep` or `ray` client's environment: no token settings but ``auth``."""
        env = _without_auth(sweep_env([self.project]), self.home)
        env.update(auth)
        return env

    def with_token(self) -> dict[str, str]:
        return self.client_env(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN_PATH=str(self.token_file))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TokenCluster]:
    base = tmp_path_factory.mktemp("token")
    (base / "cluster-home").mkdir()
    (base / "home").mkdir()
    env = _without_auth(dict(os.environ), base / "cluster-home")
    env.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=TOKEN)
    nodes = LoopbackCluster(env=env, workers=0)
    project = base / "project"
    project.mkdir()
    (project / "tokentrain.py").write_text(TRAINABLE)
    config = quadratic_sweep(name="token", trainable="tokentrain:fit")  # 2 trials, one at a time
    (project / "sweep.json").write_text(json.dumps(config))
    token_file = base / "ray-token"
    token_file.write_text(TOKEN)
    token_file.chmod(0o600)
    try:
        info = nodes.info()
        yield TokenCluster(
            info["address"], info["dashboard_port"], project, token_file, base / "home"
        )
    finally:
        nodes.close()


def _sweep(cluster: TokenCluster, env: dict[str, str], *args: str) -> tuple[int, str]:
    done = run_sweep_cli(*args, "--address", cluster.address, cwd=cluster.project, env=env)
    return done.returncode, done.stdout + done.stderr


def _refusals(cluster: TokenCluster) -> dict[str, tuple[dict[str, str], str]]:
    """Each client that lacks the token: its environment and what its first line names."""
    wrong_file = cluster.home / "wrong-token"
    wrong_file.write_text(WRONG)
    return {
        "no token": (cluster.client_env(), "this client sends none"),
        "wrong token": (
            cluster.client_env(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=WRONG),
            "refused the token this client sends (from RAY_AUTH_TOKEN)",
        ),
        "wrong token file": (
            cluster.client_env(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN_PATH=str(wrong_file)),
            f"(from RAY_AUTH_TOKEN_PATH={wrong_file})",
        ),
        "token mode, no token": (
            cluster.client_env(RAY_AUTH_MODE="token"),
            "RAY_AUTH_MODE=token is set here but this client has no token",
        ),
    }


def _told_how(code: int, output: str, named: str, address: str) -> None:
    assert code == 2, output
    first = output.strip().splitlines()[0]
    assert first.startswith("error: ") and named in first, output
    assert address in first
    for how in ("export RAY_AUTH_MODE=token", "RAY_AUTH_TOKEN_PATH", "ray get-auth-token"):
        assert how in output
    assert "Traceback" not in output
    assert "InvalidAuthToken" not in output  # Ray's own lines stay out: one message
    assert TOKEN not in output and WRONG not in output


def _no_token_in(root: Path, *outputs: str) -> None:
    for text in outputs:
        assert TOKEN not in text
    leaks = [p for p in root.rglob("*") if p.is_file() and TOKEN.encode() in p.read_bytes()]
    assert leaks == []


def _fingerprint(run_dir: RunDir) -> dict[str, str]:
    return {
        str(p.relative_to(run_dir.path)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(run_dir.path.rglob("*"))
        if p.is_file()
    }


def _refused_all(cluster: TokenCluster, cases: list[str], *args: str) -> None:
    """Each client of ``cases`` (together: they only wait on the cluster) is told how."""
    refusals = _refusals(cluster)
    outcomes = together(
        {case: partial(_sweep, cluster, refusals[case][0], *args) for case in cases}
    )
    for case, outcome in outcomes.items():
        code, output = outcome.result()
        _told_how(code, output, refusals[case][1], cluster.address)


def test_sweep_run_without_the_token_exits_2_saying_how_to_give_it(
    cluster: TokenCluster, tmp_path: Path
) -> None:
    storage = tmp_path / "runs"
    _refused_all(
        cluster,
        list(_refusals(cluster)),
        "run",
        "--config",
        "sweep.json",
        "--storage",
        str(storage),
    )
    assert not storage.exists()


@pytest.fixture(scope="module")
def token_run(
    cluster: TokenCluster, tmp_path_factory: pytest.TempPathFactory
) -> tuple[RunDir, int, str]:
    """`sweep run --address` with the token from a file: the run, its exit code and output."""
    storage = tmp_path_factory.mktemp("token-runs")
    code, output = _sweep(
        cluster, cluster.with_token(), "run", "--config", "sweep.json", "--storage", str(storage)
    )
    return RunDir(storage / "token"), code, output


def test_sweep_run_with_the_token_runs_and_keeps_it_out_of_everything(
    token_run: tuple[RunDir, int, str],
) -> None:
    run_dir, code, output = token_run
    assert code == 0, output
    result = run_dir.read_results()
    assert [t.status for t in result.trials] == ["completed", "completed"]
    _no_token_in(run_dir.path, output)


def test_sweep_resume_needs_the_token_too(
    cluster: TokenCluster, token_run: tuple[RunDir, int, str]
) -> None:
    run_dir, code, _ = token_run
    assert code == 0
    before = _fingerprint(run_dir)
    _refused_all(
        cluster, ["no token", "wrong token"], "resume", str(run_dir.path), "--num-samples", "3"
    )
    assert _fingerprint(run_dir) == before  # not a byte of the run changed
    code, output = _sweep(
        cluster, cluster.with_token(), "resume", str(run_dir.path), "--num-samples", "3"
    )
    assert code == 0, output
    assert len(run_dir.read_results().trials) == 3
    _no_token_in(run_dir.path, output)


def _job(cluster: TokenCluster, env: dict[str, str], storage: Path) -> str:
    entrypoint = ("sweep", "run", "--config", "sweep.json", "--storage", str(storage))
    return submit_ray_job(cluster.dashboard_port, cluster.project, entrypoint, env)


def test_a_ray_job_is_submitted_only_with_the_token_and_its_sweep_runs(
    cluster: TokenCluster, tmp_path: Path
) -> None:
    storage = tmp_path / "job-runs"
    wrong = cluster.client_env(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=WRONG)
    for env in (cluster.client_env(), wrong):
        output = _job(cluster, env, storage)
        assert not output.startswith("exit code 0\n"), output  # Ray's Jobs CLI refuses
        assert "AuthenticationError" in output and "token" in output
        assert not storage.exists()
    output = _job(cluster, cluster.with_token(), storage)
    assert output.startswith("exit code 0\n"), output
    assert "[2/2]" in output  # the job's log has the trial lines
    run_dir = RunDir(storage / "token")
    assert [t.status for t in run_dir.read_results().trials] == ["completed", "completed"]
    _no_token_in(run_dir.path, output)
