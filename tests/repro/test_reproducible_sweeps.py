"""Same sweep.json + seed -> same configs and trial metrics (real Ray, CPU, tiny trials)."""

from __future__ import annotations

import json
import random
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from factories import make_sweep, quadratic_sweep
from raysweep.repro.seeds import trial_seed_for
from raysweep.results.records import SweepResult
from raysweep.rundir import RunDir

pytestmark = pytest.mark.slow
RunSweep = Callable[[Path, dict[str, Any]], SweepResult]
Spaces = dict[str, dict[str, Any]]  # algorithm -> space, the quadratic_spaces fixture
OPTIONS = {"optuna": {"n_startup_trials": 2}, "hyperopt": {"n_initial_points": 2}}


def config(name: str, algorithm: str, space: dict[str, Any], **extra: Any) -> dict[str, Any]:
    search = {
        "algorithm": algorithm,
        "num_samples": 1 if algorithm == "grid" else 5,
        "max_concurrent": 1,
        "options": OPTIONS.get(algorithm, {}),
    }
    search = {**search, **extra.pop("search", {})}
    return quadratic_sweep(name=name, space=space, search=search, seed=17, **extra)


@pytest.fixture(scope="module")
def run_sweep(run_in_process: Callable[[Path, dict[str, Any]], Path]) -> RunSweep:
    """Runs sweep.json data in this process (see ``run_in_process``) and loads its results."""
    return lambda tmp_path, data: RunDir(run_in_process(tmp_path, data)).read_results()


def fingerprint(result: SweepResult) -> list[tuple[Any, ...]]:
    """Everything about each trial that must repeat, in suggestion order."""
    return [
        (t.index, t.config, t.seed, t.status, t.iterations, t.last, t.best_metric)
        for t in sorted(result.trials, key=lambda t: t.index)
    ]


@pytest.mark.parametrize(
    ("algorithm", "scheduler"),
    [
        ("grid", "fifo"),
        ("random", "fifo"),
        ("optuna", "fifo"),
        ("hyperopt", "fifo"),
        ("random", "hyperband"),
    ],
)
def test_same_seed_one_at_a_time_repeats(
    ray_session: None,
    tmp_path: Path,
    run_sweep: RunSweep,
    quadratic_spaces: Spaces,
    algorithm: str,
    scheduler: str,
) -> None:
    sched = {"type": "fifo"}
    if scheduler == "hyperband":
        sched = {"type": "hyperband", "max_t": 4, "reduction_factor": 2}
    space = quadratic_spaces[algorithm]
    first = run_sweep(tmp_path, config("a", algorithm, space, scheduler=sched))
    second = run_sweep(tmp_path, config("b", algorithm, space, scheduler=sched))
    assert fingerprint(first) == fingerprint(second)
    assert [t.index for t in first.trials] == list(range(len(first.trials)))
    assert [t.seed for t in first.trials] == [trial_seed_for(17, t.index) for t in first.trials]
    if scheduler == "hyperband":
        assert {t.iterations for t in first.trials} <= {1, 2, 3, 4}


def test_different_seed_gives_different_configs(
    ray_session: None, tmp_path: Path, run_sweep: RunSweep, quadratic_spaces: Spaces
) -> None:
    space = quadratic_spaces["optuna"]
    first = run_sweep(tmp_path, config("a", "optuna", space))
    other = run_sweep(tmp_path, {**config("b", "optuna", space), "seed": 18})
    xs = [t.config["x"] for t in first.trials]
    assert xs != [t.config["x"] for t in other.trials]
    assert not set(xs) & {t.config["x"] for t in other.trials}


def jittery(name: str, algorithm: str, space: dict[str, Any], slots: int) -> dict[str, Any]:
    return make_sweep(
        "examples.jittery:fit",
        name=name,
        space={**space, "steps": 3, "max_sleep_s": 0.08},
        search={
            "algorithm": algorithm,
            "num_samples": 7,
            "max_concurrent": slots,
            "options": OPTIONS[algorithm],
        },
        seed=5,
        reproducibility={"strict": True, "batch_size": 3},
    )


def test_strict_mode_ignores_parallelism_and_timing(
    ray_session: None, tmp_path: Path, run_sweep: RunSweep, quadratic_spaces: Spaces
) -> None:
    """Optuna (TPE after 2 startup trials) in batches of 3, trials sleeping at random."""
    space = quadratic_spaces["optuna"]
    runs = {
        slots: run_sweep(tmp_path, jittery(f"s{slots}", "optuna", space, slots))
        for slots in (1, 2, 4)
    }
    expected = fingerprint(runs[1])
    assert len(expected) == 7
    assert all(t.status == "completed" for t in runs[1].trials)
    for slots in (2, 4):
        assert fingerprint(runs[slots]) == expected, f"max_concurrent {slots} differs"


@pytest.fixture(scope="module")
def probe_result(
    ray_session: None,
    tmp_path_factory: pytest.TempPathFactory,
    run_sweep: RunSweep,
    small_sweep: Callable[..., dict[str, Any]],
) -> SweepResult:
    """4 trials, one at a time on reused actors, each reporting its first RNG draws."""
    data = small_sweep(
        name="probe",
        trainable="examples.rng_probe:fit",
        search={"algorithm": "random", "num_samples": 4, "max_concurrent": 1},
        seed=99,
    )
    return run_sweep(tmp_path_factory.mktemp("probe"), data)


def test_reused_actor_does_not_leak_rng_state(probe_result: SweepResult) -> None:
    pids = [t.last["worker_pid"] for t in probe_result.trials]
    assert len(set(pids)) < len(pids), f"actors were not reused: {pids}"
    for trial in probe_result.trials:
        seed = trial_seed_for(99, trial.index)
        assert trial.seed == seed
        assert trial.last["trial_seed"] == seed
        assert trial.last["first_random"] == random.Random(seed).random()
        np.random.seed(seed)
        assert trial.last["first_numpy"] == float(np.random.random())


def test_torch_rng_is_seeded_on_fresh_and_reused_actors(probe_result: SweepResult) -> None:
    """The probe imports torch at module level: seeded on the first trial of an actor too."""
    import torch

    for trial in probe_result.trials:
        torch.manual_seed(trial.seed)
        assert trial.last["first_torch"] == float(torch.rand(1).item()), trial.index


@pytest.mark.gpu
def test_torch_mlp_on_cuda_repeats_in_deterministic_mode(
    tmp_path: Path, sweep_cli: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    """Two runs on GPU 0 (fresh Ray each) give bit-identical metrics; repro agrees."""
    data = make_sweep(
        "torch_mlp",
        name="mlp-gpu",
        trainable_args={"dataset": "digits", "epochs": 3},
        space={
            "lr": {"type": "loguniform", "low": 0.001, "high": 0.03},
            "hidden_size": {"type": "choice", "values": [32, 64]},
            "dropout": 0.1,
        },
        resources={"cpus_per_trial": 1, "gpus_per_trial": 0.5},
        reproducibility={"deterministic": True},
        seed=3,
    )
    path = tmp_path / "mlp.json"
    path.write_text(json.dumps(data))
    results = []
    for name in ("a", "b"):
        ran = sweep_cli("run", "--config", str(path), "--storage", str(tmp_path),
                        "--name", name, "--gpus", "0")  # fmt: skip
        assert ran.returncode == 0, ran.stdout + ran.stderr
        results.append(RunDir(tmp_path / name).read_results())
    assert fingerprint(results[0]) == fingerprint(results[1])
    assert all(t.gpu_ids == ["0"] for t in results[0].trials)
    manifest = json.loads((tmp_path / "a" / "repro.json").read_text())
    assert manifest["cuda"]["gpus"] and manifest["cuda"]["driver_version"]
    assert manifest["cuda"]["torch_cuda"]
    repro = sweep_cli("repro", str(tmp_path / "a"))
    assert repro.returncode == 0, repro.stdout + repro.stderr
    assert repro.stdout.strip().endswith("match")
