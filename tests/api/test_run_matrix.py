"""Every algorithm x every scheduler runs a tiny real sweep to completion."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from factories import quadratic_sweep
from raysweep import api
from raysweep.results.records import SweepResult
from raysweep.rundir import RunDir

Spaces = dict[str, dict[str, Any]]  # algorithm -> space, the quadratic_spaces fixture
SCHEDULERS: dict[str, dict[str, Any]] = {
    "fifo": {"type": "fifo"},
    "asha": {"type": "asha", "max_t": 4, "grace_period": 1, "reduction_factor": 2},
    "hyperband": {"type": "hyperband", "max_t": 4, "reduction_factor": 2},
    "median": {"type": "median", "grace_period": 1, "min_samples_required": 2},
}


def write_config(
    tmp_path: Path, algorithm: str, space: dict[str, Any], scheduler: str, **extra: Any
) -> Path:
    search = {
        "algorithm": algorithm,
        "num_samples": 1 if algorithm == "grid" else 4,
        "max_concurrent": 2,
    }
    config = quadratic_sweep(name=f"{algorithm}-{scheduler}", space=space, search=search,
                             scheduler=SCHEDULERS[scheduler], seed=3, **extra)  # fmt: skip
    path = tmp_path / f"{algorithm}-{scheduler}.json"
    path.write_text(json.dumps(config))
    return path


def run(tmp_path: Path, config: Path) -> tuple[int, SweepResult, str]:
    out = io.StringIO()
    code = api.run_sweep(api.RunOptions(config=config, storage=tmp_path / "runs"), out=out)
    name = json.loads(config.read_text())["name"]
    return code, RunDir(tmp_path / "runs" / name).read_results(), out.getvalue()


@pytest.mark.parametrize("scheduler", sorted(SCHEDULERS))
def test_algorithm_scheduler_matrix(
    ray_session: None,
    tmp_path: Path,
    quadratic_spaces: Spaces,
    quadratic_algorithm: str,
    scheduler: str,
) -> None:
    config = write_config(
        tmp_path, quadratic_algorithm, quadratic_spaces[quadratic_algorithm], scheduler
    )
    code, result, output = run(tmp_path, config)
    assert code == 0, output
    expected = 3 if quadratic_algorithm == "grid" else 4
    assert len(result.trials) == expected
    assert sorted(t.index for t in result.trials) == list(range(expected))
    assert all(t.status in ("completed", "stopped") for t in result.trials)
    assert all(t.best_metric is not None for t in result.trials)
    if quadratic_algorithm == "grid":
        assert sorted(t.config["x"] for t in result.trials) == [1.0, 2.5, 4.0]
    assert f"[{expected}/{expected}]" in output
    assert "Best config:" in output


def test_hyperband_stops_trials_early_with_the_default_concurrency(
    ray_session: None, tmp_path: Path, quadratic_spaces: Spaces
) -> None:
    """Every trial is admitted at once, so brackets fill and their worst trials stop."""
    path = write_config(tmp_path, "random", quadratic_spaces["random"], "hyperband")
    config = json.loads(path.read_text())
    del config["search"]["max_concurrent"]
    config["search"]["num_samples"] = 8
    path.write_text(json.dumps(config))
    code, result, output = run(tmp_path, path)
    assert code == 0, output
    assert len(result.trials) == 8
    assert any(t.status == "stopped" for t in result.trials), [t.status for t in result.trials]
    # examples.quadratic reports no checkpoints: the run says what pausing costs it.
    assert "hyperband pauses trials at iterations 1, 2, 4; a paused trial resumes" in output
