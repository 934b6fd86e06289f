"""A Ray whose internals moved is refused before anything starts (exit 2, nothing written)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from raysweep._raycompat.targets import RAY_TESTED

REPO = Path(__file__).resolve().parents[2]

# Simulates a Ray release without one patched method, then runs the CLI in-process.
SCRIPT = textwrap.dedent(
    """
    import sys
    from ray.tune.execution import tune_controller
    del tune_controller.TuneController._maybe_reuse_cached_actor
    from raysweep.cli import main
    code = main(sys.argv[1:])
    import ray
    print("ray initialized:", ray.is_initialized())
    sys.exit(code)
    """
)


def test_sweep_run_with_mismatched_ray_exits_2_writes_nothing_starts_nothing(
    tmp_path: Path,
) -> None:
    import ray

    config = tmp_path / "sweep.json"
    config.write_text(
        json.dumps(
            {
                "name": "compat",
                "trainable": "examples.quadratic:fit",
                "metric": "loss",
                "mode": "min",
                "space": {"x": {"type": "uniform", "low": 0, "high": 1}},
                "search": {"algorithm": "random", "num_samples": 2},
            }
        )
    )
    storage = tmp_path / "runs"
    env = {**os.environ, "PYTHONPATH": str(REPO), "RAY_USAGE_STATS_ENABLED": "0"}
    env.pop("RAY_ADDRESS", None)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, "run", "--config", str(config), "--storage", str(storage)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"Ray {ray.__version__} is installed" in done.stderr
    assert RAY_TESTED in done.stderr
    assert "TuneController._maybe_reuse_cached_actor is missing" in done.stderr
    assert "ray initialized: False" in done.stdout
    assert not storage.exists()
