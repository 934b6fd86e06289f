"""The in-process executor end to end: no Ray started; `sweep repro` (on Ray) matches its
trials. Killed and signalled local runs, resumed exactly once: tests/engines/."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import REPO, sweep_env

from factories import make_sweep

pytestmark = pytest.mark.slow

LOCAL_SWEEP: dict[str, Any] = make_sweep(
    "lightgbm",
    name="local",
    trainable_args={"dataset": "breast_cancer", "num_boost_round": 60, "report_every": 5},
    space={
        "learning_rate": {"type": "loguniform", "low": 0.01, "high": 0.3},
        "num_leaves": {"type": "int", "low": 4, "high": 64, "log": True},
        "feature_fraction": {"type": "uniform", "low": 0.5, "high": 1.0},
        "objective": "binary",
    },
    search={"algorithm": "optuna", "num_samples": 40, "max_concurrent": 2,
            "options": {"n_startup_trials": 6}},
    scheduler={"type": "asha", "max_t": 12, "grace_period": 2, "reduction_factor": 3},
    seed=5,
    checkpoint={"frequency": 4},
    execution="local",
)  # fmt: skip


def config(tmp_path: Path, **changes: Any) -> Path:
    path = tmp_path / "local.json"
    path.write_text(json.dumps({**LOCAL_SWEEP, **changes}))
    return path


def test_a_local_run_starts_no_ray_and_sweep_repro_on_ray_matches_it(tmp_path: Path) -> None:
    path = config(tmp_path, search={"algorithm": "random", "num_samples": 4, "max_concurrent": 2})
    script = (
        "import sys, ray; from pathlib import Path; from raysweep import api; "
        f"code = api.run_sweep(api.RunOptions(config=Path({str(path)!r}), "
        f"storage={str(tmp_path / 'runs')!r})); "
        "print('RAY_STARTED', ray.is_initialized()); sys.exit(code)"
    )
    env = sweep_env()
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=240)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "RAY_STARTED False" in done.stdout
    run_dir = tmp_path / "runs" / "local"
    repro = subprocess.run(
        [sys.executable, "-m", "raysweep.cli", "repro", str(run_dir)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert repro.returncode == 0, repro.stdout + repro.stderr
    assert "match" in repro.stdout.splitlines()[-1]
