"""A sweep on an existing two-node Ray cluster on loopback: user code and data travel.

The user trainable's module sits in the project directory only (not installed,
not on the nodes' PYTHONPATH); its CSV is named by a path relative to the
sweep.json. `sweep run --address` must ship the code, spread trials over both
nodes, and `ray job submit ... -- sweep run` must work inside a Ray Job.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import INHERITED_RAY, LoopbackCluster, submit_ray_job

from factories import make_sweep
from raysweep.rundir import RunDir

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
pytestmark = pytest.mark.slow

TRAINABLE = textwrap.dedent(
    """
    import csv, time
    from ray import tune
    import raysweep

    def fit(config):
        path = raysweep.trial_context().trainable_args["data"]
        with open(path) as fh:
            rows = [float(r["y"]) for r in csv.DictReader(fh)]
        target = sum(rows) / len(rows)
        for step in range(3):
            time.sleep(0.3)
            tune.report({"loss": (config["x"] - target) ** 2})
    """
)


def _env(**extra: str) -> dict[str, str]:
    # none of the token mode an in-process ray.init of this session set: the test cluster
    # does not inherit it either (LoopbackCluster)
    env = {k: v for k, v in os.environ.items() if k not in (*INHERITED_RAY, "PYTHONPATH")}
    env.update(RAY_USAGE_STATS_ENABLED="0", PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}")
    env.update(extra)
    # this tree's raysweep first, then the user's code the test puts on the path
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(REPO / "src"), extra.get("PYTHONPATH")) if p
    )
    return env


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    """A user's project: its trainable module, a CSV beside it, a sweep.json naming both."""
    proj = tmp_path / "proj"
    (proj / "data").mkdir(parents=True)
    (proj / "mytrain_cluster.py").write_text(TRAINABLE)
    (proj / "data" / "points.csv").write_text("y\n1.0\n2.0\n3.0\n")
    config = make_sweep(
        "mytrain_cluster:fit",
        name="cluster",
        trainable_args={"data": "data/points.csv"},
        space={"x": {"type": "uniform", "low": 0, "high": 4}},
        search={"algorithm": "random", "num_samples": 4, "max_concurrent": 2},
        seed=9,
    )
    (proj / "sweep.json").write_text(json.dumps(config))
    return proj


@pytest.fixture(scope="module", autouse=True)
def cluster_process() -> Iterator[LoopbackCluster]:
    """Two Ray nodes with one CPU each, on 127.0.0.1, dashboard (Jobs API) on a free port.

    Started before the first test, which needs no cluster and runs while it comes up.
    """
    cluster = LoopbackCluster()
    yield cluster
    cluster.close()


@pytest.fixture(scope="module")
def cluster(cluster_process: LoopbackCluster) -> dict[str, Any]:
    """The cluster's address, dashboard port and node ids, once both nodes are up."""
    return cluster_process.info()


def _sweep(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "sweep"), *args], cwd=cwd, env=_env(**env),
        capture_output=True, text=True, timeout=240,
    )  # fmt: skip


def _check_run(run_dir: RunDir) -> set[str]:
    result = run_dir.read_results()
    assert len(result.trials) == 4
    assert all(t.status == "completed" for t in result.trials), [t.error for t in result.trials]
    assert run_dir.read_state()["status"] == "completed" and run_dir.report_path.is_file()
    return {t.node_id for t in result.trials if t.node_id}


def test_relative_data_path_runs_from_any_directory_locally(project: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = _sweep(
        elsewhere, "run", "--config", "../proj/sweep.json", "--storage", str(tmp_path / "runs"),
        "--no-dashboard", PYTHONPATH=str(project),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    run_dir = RunDir(tmp_path / "runs" / "cluster")
    _check_run(run_dir)
    spec = run_dir.read_spec()
    assert spec.trainable_args["data"] == str((project / "data" / "points.csv").resolve())


def test_sweep_on_a_cluster_ships_the_user_code_and_spreads_trials(
    project: Path, tmp_path: Path, cluster: dict[str, Any]
) -> None:
    elsewhere = tmp_path / "elsewhere"  # not the project directory: the paths must still hold
    elsewhere.mkdir()
    done = _sweep(
        elsewhere, "run", "--config", "../proj/sweep.json", "--address", cluster["address"],
        "--storage", str(tmp_path / "runs"), PYTHONPATH=str(project),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    run_dir = RunDir(tmp_path / "runs" / "cluster")
    nodes = _check_run(run_dir)
    assert nodes == set(cluster["nodes"])  # trials ran on both nodes
    assert run_dir.read_spec().trainable_args["data"] == str(project / "data" / "points.csv")


def test_gpus_with_a_cluster_is_explained(project: Path, cluster: dict[str, Any]) -> None:
    done = _sweep(
        project, "run", "--config", "sweep.json", "--address", cluster["address"],
        "--gpus", "0", "--dry-run",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "gpus: none" in done.stdout


SWEEP_RUN_IN_JOB = ("sweep", "run", "--config", "sweep.json", "--storage")  # + an absolute one


def _submit_job(cluster: dict[str, Any], working_dir: Path, *entrypoint: str) -> str:
    """``ray job submit --working-dir DIR -- ENTRYPOINT...``: its exit code and output."""
    return submit_ray_job(cluster["dashboard_port"], working_dir, entrypoint, _env())


def test_ray_job_submit_runs_a_sweep(
    project: Path, tmp_path: Path, cluster: dict[str, Any]
) -> None:
    storage = tmp_path / "job-runs"
    output = _submit_job(cluster, project, *SWEEP_RUN_IN_JOB, str(storage))
    assert output.startswith("exit code 0\n"), output
    assert "succeeded" in output and "[4/4]" in output  # the job's log has the trial lines
    nodes = _check_run(RunDir(storage / "cluster"))
    assert nodes <= set(cluster["nodes"])


SIBLING_TRAINABLE = textwrap.dedent(
    """
    from ray import tune
    from features_sibling import shift  # a module beside this one, not installed

    def fit(config):
        for step in range(2):
            tune.report({"loss": (config["x"] - shift()) ** 2})
    """
)


@pytest.fixture()
def sibling_project(tmp_path: Path) -> Path:
    """A trainable module that imports a module beside it, and a sweep.json naming it."""
    proj = tmp_path / "sibling"
    proj.mkdir()
    (proj / "train_sibling.py").write_text(SIBLING_TRAINABLE)
    (proj / "features_sibling.py").write_text("def shift():\n    return 1.5\n")
    config = make_sweep(
        "train_sibling:fit",
        name="sibling",
        space={"x": {"type": "uniform", "low": 0, "high": 4}},
        search={"algorithm": "random", "num_samples": 4, "max_concurrent": 2},
        seed=3,
    )
    (proj / "sweep.json").write_text(json.dumps(config))
    return proj


def test_a_trainable_importing_its_sibling_runs_on_a_cluster(
    sibling_project: Path, tmp_path: Path, cluster: dict[str, Any]
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = _sweep(
        elsewhere, "run", "--config", str(sibling_project / "sweep.json"),
        "--address", cluster["address"], "--storage", str(tmp_path / "runs"),
        PYTHONPATH=str(sibling_project),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    _check_run(RunDir(tmp_path / "runs" / "sibling"))  # every trial completed


def test_a_sibling_that_cannot_travel_exits_2_naming_it(
    sibling_project: Path, tmp_path: Path, cluster: dict[str, Any]
) -> None:
    data = tmp_path / "data"  # --working-dir names another folder: train_sibling.py goes alone
    data.mkdir()
    storage = tmp_path / "runs"
    done = _sweep(
        tmp_path, "run", "--config", str(sibling_project / "sweep.json"),
        "--address", cluster["address"], "--storage", str(storage), "--working-dir", str(data),
        PYTHONPATH=str(sibling_project),
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert "No module named 'features_sibling'" in done.stderr
    assert "--working-dir" in done.stderr and "Traceback" not in done.stderr
    assert not storage.exists()


def test_a_ray_job_whose_trainable_imports_its_sibling_completes(
    sibling_project: Path, tmp_path: Path, cluster: dict[str, Any]
) -> None:
    storage = tmp_path / "job-runs"  # the import check runs inside the job, then the trials
    output = _submit_job(cluster, sibling_project, *SWEEP_RUN_IN_JOB, str(storage))
    assert output.startswith("exit code 0\n"), output
    _check_run(RunDir(storage / "sibling"))  # every trial completed


def test_a_ray_job_whose_sibling_is_not_in_its_working_dir_exits_2(
    sibling_project: Path, tmp_path: Path, cluster: dict[str, Any]
) -> None:
    extra = tmp_path / "extra"  # on the job driver's path only: the nodes' workers lack it
    extra.mkdir()
    (sibling_project / "features_sibling.py").rename(extra / "features_sibling.py")
    storage = tmp_path / "job-runs"
    command = (
        f'PYTHONPATH="$PYTHONPATH:{extra}" exec sweep run --config sweep.json --storage {storage}'
    )
    output = _submit_job(cluster, sibling_project, "sh", "-c", command)
    assert "failed with exit code 2" in output, output  # Ray's words for the entrypoint's exit
    assert "No module named 'features_sibling'" in output
    assert "ray job submit --working-dir" in output and "Traceback" not in output
    assert not storage.exists()
