"""Early stopping survives a crash: killed at several points and resumed, a sweep stops
exactly the trials the uninterrupted sweep stops (issue: scheduler state on resume).

Ray Tune does not save its scheduler's state; raysweep gives the restored
experiment's scheduler the rows already recorded (schedulers/restore.py); the
local engine replays its journal into a fresh scheduler. Each engine and
scheduler's sweep runs at one slot, so the uninterrupted sweep's decisions are a
function of the seed; the interrupted one is killed with SIGKILL (the driver and
its Ray) after its 2nd, 4th and 6th trial started, resumed after each kill, and
must end with the same statuses, iterations and best values, trial by trial. The ASHA
sweeps search with ``mf-tpe``, whose suggestions follow every report: a model that
lost what it learned before a kill would suggest other configurations after it.

Hyperband (Ray engine only: the local engine refuses it) halves a bracket only
when all its trials reach the rung, so at one slot it stops nothing: its sweep
admits the whole bracket (9 trials, 1 CPU each; 2 run at a time on 2 cores, the
rest wait paused or pending). Synchronous halving decides on the results at each
rung, whatever order the trials got there in, so that sweep too is a function of
the seed. It is killed after its 4th, 7th and 10th start, while a trial waits at
its rung.
"""

from __future__ import annotations

import contextlib
import functools
import json
import time
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import Sweeps, crash_config, settle, together

pytestmark = pytest.mark.slow

SCHEDULERS: dict[str, dict[str, Any]] = {
    "asha": {"type": "asha", "max_t": 9, "grace_period": 1, "reduction_factor": 3},
    "median": {"type": "median", "grace_period": 2, "min_samples_required": 2},
    "hyperband": {"type": "hyperband", "max_t": 9, "reduction_factor": 3},
}
# The local engine refuses hyperband (asserted in tests/engines).
ENGINE_SCHEDULERS = {"ray": ("asha", "median", "hyperband"), "local": ("asha", "median")}
# the largest bracket of max_t 9, reduction_factor 3 (schedulers/hyperband.py) at once
WHOLE_BRACKET: dict[str, Any] = {"max_concurrent": 9}
KILL_AFTER_STARTS = (2, 4, 6)
# Hyperband's 4th, 7th and 10th starts: the first two kills land while a trial waits
# paused at its rung for the rest of its bracket (it is paused again on resume)
KILL_HYPERBAND_AFTER = (4, 7, 10)
ENGINES = ("ray", "local")
RAY: dict[str, Any] = {  # a user trainable that checkpoints every report
    "trainable": "examples.checkpointing:fit",
    "space": {
        "x": {"type": "uniform", "low": -5, "high": 5},
        "steps": 9,
        "lr": 0.1,
        "sleep_s": 0.05,
    },
    "checkpoint": {"frequency": 1, "num_to_keep": 2},
}
LOCAL: dict[str, Any] = {  # the local engine runs the built-in GBMs: 9 reports of 100 rounds
    "trainable": "lightgbm",
    "trainable_args": {"dataset": "breast_cancer", "num_boost_round": 900, "report_every": 100},
    "metric": "val_loss",
    "space": {
        "learning_rate": {"type": "loguniform", "low": 0.001, "high": 0.3},
        "num_leaves": {"type": "int", "low": 4, "high": 32},
        "objective": "binary",
    },
    "checkpoint": {"frequency": 0},
    "execution": "local",
}


def sweep_config(path: Path, engine: str, scheduler: str) -> Path:
    search: dict[str, Any] = {"algorithm": "random", "num_samples": 9, "max_concurrent": 1}
    if scheduler == "asha":  # the multi-fidelity searcher: its model must survive the kills
        search.update(algorithm="mf-tpe", options={"n_startup_trials": 2})
    extra: dict[str, Any] = {}
    if scheduler == "hyperband":
        search.update(WHOLE_BRACKET)
        extra["resources"] = {"cpus_per_trial": 1}
    return crash_config(
        path,
        name=scheduler,
        search=search,
        scheduler=SCHEDULERS[scheduler],
        seed=7,
        **(LOCAL if engine == "local" else RAY),
        **extra,
    )


def starts(run_dir: Path) -> int:
    """Trial starts recorded in trials.jsonl (restarts after a resume count again)."""
    path, count = run_dir / "trials.jsonl", 0
    if path.is_file():
        for line in path.read_text().splitlines():
            with contextlib.suppress(ValueError):
                count += json.loads(line).get("event") == "start"
    return count


def outcome(run_dir: Path) -> dict[int, tuple[str, int, float]]:
    """index -> (status, iterations, best metric) from results.json."""
    trials = json.loads((run_dir / "results.json").read_text())["trials"]
    return {t["index"]: (t["status"], t["iterations"], t["best_metric"]) for t in trials}


def uninterrupted(tmp: Path, engine: str, scheduler: str) -> dict[int, tuple[str, int, float]]:
    sweeps = Sweeps(tmp)
    try:
        config = sweep_config(tmp / "c.json", engine, scheduler)
        code, out = sweeps.run("run", "--config", str(config), "--storage", str(tmp / "runs"),
                               "--no-dashboard", timeout=420)  # fmt: skip
        assert code == 0, out
        return outcome(tmp / "runs" / scheduler)
    finally:
        sweeps.close()


def interrupted(
    tmp: Path, engine: str, scheduler: str
) -> tuple[dict[int, tuple[str, int, float]], list[int]]:
    """The same sweep killed after each of KILL_AFTER_STARTS trial starts, resumed each time."""
    sweeps = Sweeps(tmp)
    run_dir = tmp / "runs" / scheduler
    killed_at: list[int] = []
    try:
        config = sweep_config(tmp / "c.json", engine, scheduler)
        args = ["run", "--config", str(config), "--storage", str(tmp / "runs"), "--no-dashboard"]
        for after in KILL_HYPERBAND_AFTER if scheduler == "hyperband" else KILL_AFTER_STARTS:
            proc = sweeps.start(*args)
            deadline = time.monotonic() + 300
            while starts(run_dir) < after and proc.poll() is None:
                assert time.monotonic() < deadline, f"no {after} trial starts"
                time.sleep(0.02)
            if proc.poll() is not None:  # it finished before the kill (the test says so)
                args = ["resume", str(run_dir), "--no-dashboard"]
                break
            sweeps.kill_group(proc)
            killed_at.append(starts(run_dir))
            args = ["resume", str(run_dir), "--no-dashboard"]
        code, out = sweeps.run(*args, timeout=420)
        assert code == 0, out
        return outcome(run_dir), killed_at
    finally:
        sweeps.close()


@pytest.fixture(scope="module", params=ENGINES)
def runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Every scheduler's sweeps on one engine, uninterrupted and killed, three at a time."""
    engine = request.param
    scenarios = {}
    for scheduler in ENGINE_SCHEDULERS[engine]:
        for kind, scenario in (("whole", uninterrupted), ("killed", interrupted)):
            tmp = tmp_path_factory.mktemp(f"{engine}-{scheduler}-{kind}")
            scenarios[scheduler, kind] = functools.partial(scenario, tmp, engine, scheduler)
    outcomes = together(scenarios, at_once=3)
    yield outcomes
    settle(outcomes)


@pytest.mark.timeout(1500)  # the fixture runs every sweep of its engine, on 2 cores
@pytest.mark.parametrize("scheduler", list(SCHEDULERS))
def test_killed_and_resumed_sweep_stops_the_trials_the_uninterrupted_one_stops(
    runs: Any, scheduler: str
) -> None:
    if (scheduler, "whole") not in runs:
        pytest.skip(f"{scheduler} is not run on this engine here (ENGINE_SCHEDULERS says why)")
    whole = runs[scheduler, "whole"].result()
    killed, killed_at = runs[scheduler, "killed"].result()
    assert killed_at, "the sweep finished before the first kill"
    assert any(status == "stopped" for status, _, _ in whole.values()), whole  # it stops some
    assert killed == whole, (killed_at, killed, whole)


def test_a_resume_notes_only_the_schedulers_whose_state_it_does_not_rebuild() -> None:
    """Every built-in scheduler is rebuilt; any other type gets a one-line note."""
    from raysweep.schedulers.restore import resume_note

    assert all(resume_note(name) is None for name in (*SCHEDULERS, "fifo"))
    note = resume_note("pbt")
    assert note is not None and "pbt" in note and "\n" not in note
