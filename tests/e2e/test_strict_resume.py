"""Strict mode survives kill -9: a resumed strict sweep gives the trials of an uninterrupted one.

Real `sweep` processes on both engines, two trials at once, TPE after 3 random
trials; the whole process tree is killed with SIGKILL after a few trials ended,
then `sweep resume` finishes the run. Every trial index must have the config,
seed and metrics the same sweep gets when nothing stops it. A local strict sweep
extended with `--num-samples` gives the trials of the longer sweep.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import Sweeps

from factories import make_sweep

pytestmark = pytest.mark.slow

TRIALS = 16


# TPE after 3 random trials, two at a time; each test adds its engine and strict schedule
STRICT: dict[str, Any] = make_sweep(
    "lightgbm",
    name="strict",
    trainable_args={"dataset": "breast_cancer", "num_boost_round": 60, "report_every": 10},
    space={
        "learning_rate": {"type": "loguniform", "low": 0.01, "high": 0.3},
        "num_leaves": {"type": "int", "low": 4, "high": 64, "log": True},
        "objective": "binary",
    },
    search={"algorithm": "optuna", "num_samples": TRIALS, "max_concurrent": 2,
            "options": {"n_startup_trials": 3}},
    seed=8,
)  # fmt: skip


def strict(schedule: str) -> dict[str, Any]:
    """reproducibility: strict batches of 3 on ``schedule``."""
    return {"strict": True, "batch_size": 3, "strict_schedule": schedule}


def ended(run_dir: Path) -> int:
    """Trials that ended so far (trials.jsonl, torn lines skipped)."""
    path = run_dir / "trials.jsonl"
    count = 0
    for line in path.read_text().splitlines() if path.is_file() else []:
        try:
            count += json.loads(line).get("event") == "ended"
        except ValueError:
            continue
    return count


def by_index(run_dir: Path) -> dict[int, tuple[Any, ...]]:
    trials = json.loads((run_dir / "results.json").read_text())["trials"]
    return {
        t["index"]: (t["status"], t["config"], t["seed"], t["last"]["val_loss"], t["iterations"])
        for t in trials
    }


# The window (new strict sweeps) on both engines, batches (older run directories) on the
# local engine; batches on Ray restore their state through the same searcher snapshot as
# the window and are left out for the suite's time (two Ray sweeps cost ~30 s).
@pytest.mark.parametrize(
    ("engine", "schedule"), [("local", "window"), ("local", "batch"), ("ray", "window")]
)
def test_a_killed_strict_sweep_resumes_to_the_uninterrupted_trials(
    tmp_path: Path, drivers: Sweeps, engine: str, schedule: str
) -> None:
    config = tmp_path / "strict.json"
    data = {**STRICT, "reproducibility": strict(schedule), "execution": engine}
    config.write_text(json.dumps(data))
    straight = drivers.start("run", "--config", str(config), "--storage", str(tmp_path / "a"))
    killed = drivers.start("run", "--config", str(config), "--storage", str(tmp_path / "b"))
    run_dir = tmp_path / "b" / "strict"
    deadline = time.monotonic() + 180
    while ended(run_dir) < 5:
        assert killed.poll() is None, f"the sweep ended before the kill: {drivers.output(killed)}"
        assert time.monotonic() < deadline, "5 trials did not end in 180 s"
        time.sleep(0.02)
    drivers.kill_group(killed)
    assert ended(run_dir) < TRIALS, "every trial had ended: nothing was left to resume"

    code, out = drivers.run("resume", str(run_dir))
    assert code == 0, out
    code, out = drivers.wait(straight)
    assert code == 0, out
    resumed, reference = by_index(run_dir), by_index(tmp_path / "a" / "strict")
    assert sorted(reference) == list(range(TRIALS))
    assert resumed == reference


@pytest.mark.parametrize("schedule", ["window", "batch"])
def test_a_local_strict_extension_gives_the_trials_of_the_longer_sweep(
    tmp_path: Path, drivers: Sweeps, schedule: str
) -> None:
    """The local engine replays its journal: `--num-samples` continues the schedule as if
    the sweep had been started with the larger number."""
    data = {**STRICT, "reproducibility": strict(schedule), "execution": "local"}
    longer = tmp_path / "longer.json"
    longer.write_text(json.dumps(data))
    shorter = tmp_path / "shorter.json"
    shorter.write_text(
        json.dumps({**data, "search": {**data["search"], "num_samples": TRIALS - 6}})
    )
    code, out = drivers.run("run", "--config", str(longer), "--storage", str(tmp_path / "a"))
    assert code == 0, out
    code, out = drivers.run("run", "--config", str(shorter), "--storage", str(tmp_path / "b"))
    assert code == 0, out
    run_dir = tmp_path / "b" / "strict"
    assert sorted(by_index(run_dir)) == list(range(TRIALS - 6))
    code, out = drivers.run("resume", str(run_dir), "--num-samples", str(TRIALS))
    assert code == 0, out
    assert by_index(run_dir) == by_index(tmp_path / "a" / "strict")
