"""A trial actor that is starting is not killed when a cached actor comes free."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from factories import make_sweep

from .slow_start import LOCK_ENV, SLOW_ENV

TRIALS = 400


def test_both_slots_keep_running_trials_when_the_second_actor_starts_late(
    tmp_path: Path, sweep_cli: Callable[..., Any]
) -> None:
    # The second actor's worker starts 2 s late, so the first actor finishes
    # trials while it starts. Ray Tune alone would give the next trial the first
    # actor, kill the starting one and do the same at every hand-over after it:
    # one slot would run every trial.
    config = make_sweep(
        "tests._raycompat.slow_start:short",
        name="late-actor",
        search={"algorithm": "random", "num_samples": TRIALS, "max_concurrent": 2},
        resources={"cpus_per_trial": 1},
        seed=1,
    )
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(config))
    env = {
        LOCK_ENV: str(tmp_path / "first-import.lock"),
        SLOW_ENV: "2",
        # Ray's workers import it before they accept work: the actor is slow to start.
        "RAY_preload_python_modules": "tests._raycompat.slow_start",
    }
    done = sweep_cli("run", "--config", str(path), "--storage", str(tmp_path / "runs"), env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = (tmp_path / "runs" / "late-actor" / "trial_info.jsonl").read_text().splitlines()
    starts = [json.loads(line) for line in lines]
    starts = [row for row in starts if row["event"] == "start"]
    assert len(starts) == TRIALS
    second_half = Counter(row["pid"] for row in starts[TRIALS // 2 :])
    assert len(second_half) == 2, second_half  # the same two actors, reused to the end
    assert min(second_half.values()) >= TRIALS // 10, second_half
