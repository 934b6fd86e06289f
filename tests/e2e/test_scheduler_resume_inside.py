"""Early-stopping decisions a trial had earned survive a kill that lands *inside* it
(issue #53.3): killed with SIGKILL right after a trial's first report, between a
report and its next checkpoint, and at a rung boundary, then resumed, a sweep ends
with the statuses, iterations and best values of the uninterrupted one, trial by trial.

A trial that continues from a checkpoint reports the iteration after it first; the
resume gives the scheduler its recorded rows up to that checkpoint before it runs
again (schedulers/restore.py), so a rung it had reached is decided there. One slot
for ASHA and the median rule (their decisions are then a function of the seed), two
slots in strict mode for ASHA (its rungs settled by trial index), and Hyperband with
its whole bracket admitted (a bracket halves on the results at its rung, whatever
their order), killed right after the rung reports of trials the halving stops. The
local engine runs an unfinished trial again from its first iteration
(engines/local/replay.py), so no kill inside a trial can skip a decision there;
tests/e2e/test_scheduler_resume.py covers its kills.
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

Outcome = dict[int, tuple[str, int, float]]
ASHA: dict[str, Any] = {"type": "asha", "max_t": 9, "grace_period": 1, "reduction_factor": 3}
MEDIAN: dict[str, Any] = {"type": "median", "grace_period": 2, "min_samples_required": 2}
HYPERBAND: dict[str, Any] = {"type": "hyperband", "max_t": 9, "reduction_factor": 3}
HYPERBAND_KILLS = ((5, 3), (7, 3))
# name -> (scheduler, slots, checkpoint frequency, strict, kills: (trial index, its report
# count when killed)). ASHA's rungs are at iterations 1, 3 and 9; the median rule decides
# from iteration 2. Each kill lands on a trial the uninterrupted sweep decides there.
SCENARIOS: dict[str, tuple[dict[str, Any], int, int, bool, tuple[tuple[int, int], ...]]] = {
    # right after the first report (rung 1: stopped there), then at the rung-3 boundary
    "asha": (ASHA, 1, 1, False, ((3, 1), (5, 3))),
    # between a report and the next checkpoint (3rd report, checkpoint at 2), then at the
    # report (and checkpoint) it is stopped at
    "median": (MEDIAN, 1, 2, False, ((3, 3), (5, 2))),
    "asha-strict-2": (ASHA, 2, 1, True, ((4, 1), (6, 3))),
    # Hyperband's largest bracket admitted at once (9 trials, 2 running at a time): killed
    # right after the rung reports of trials its bracket stops there
    "hyperband": (HYPERBAND, 9, 1, False, HYPERBAND_KILLS),
}


def sweep_config(path: Path, name: str) -> Path:
    scheduler, slots, frequency, strict, _ = SCENARIOS[name]
    search: dict[str, Any] = {"algorithm": "random", "num_samples": 9, "max_concurrent": slots}
    if scheduler is ASHA:  # the searcher must hear of a trial stopped on resume, as when live
        search.update(algorithm="mf-tpe", options={"n_startup_trials": 2})
    extra: dict[str, Any] = {}
    if strict:
        extra["reproducibility"] = {"strict": True, "batch_size": slots}
    if scheduler is HYPERBAND:  # a bracket halves on its rung, whatever the order: 2 at once
        extra["resources"] = {"cpus_per_trial": 1}
    return crash_config(
        path,
        name=name,
        trainable="examples.checkpointing:fit",
        space={
            "x": {"type": "uniform", "low": -5, "high": 5},
            "steps": 9,
            "lr": 0.1,
            "sleep_s": 0.15,
        },
        checkpoint={"frequency": frequency, "num_to_keep": 2},
        search=search,
        scheduler=scheduler,
        seed=7,
        **extra,
    )


def started(run_dir: Path) -> dict[int, str]:
    """Trial index -> the id it last started under (trials.jsonl)."""
    path, ids = run_dir / "trials.jsonl", {}
    if path.is_file():
        for line in path.read_text().splitlines():
            with contextlib.suppress(ValueError):
                record = json.loads(line)
                if record.get("event") == "start":
                    ids[int(record["index"])] = str(record["trial_id"])
    return ids


def reports(run_dir: Path, trial_id: str) -> int:
    """The rows Ray recorded for ``trial_id`` (its result.json)."""
    path = run_dir / "tune" / f"trial_{trial_id}" / "result.json"
    return len(path.read_bytes().splitlines()) if path.is_file() else 0


def outcome(run_dir: Path) -> Outcome:
    """index -> (status, iterations, best metric) from results.json."""
    trials = json.loads((run_dir / "results.json").read_text())["trials"]
    return {t["index"]: (t["status"], t["iterations"], t["best_metric"]) for t in trials}


def uninterrupted(tmp: Path, name: str) -> Outcome:
    sweeps = Sweeps(tmp)
    try:
        config = sweep_config(tmp / "c.json", name)
        code, out = sweeps.run("run", "--config", str(config), "--storage", str(tmp / "runs"),
                               "--no-dashboard", timeout=420)  # fmt: skip
        assert code == 0, out
        return outcome(tmp / "runs" / name)
    finally:
        sweeps.close()


def interrupted(tmp: Path, name: str) -> tuple[Outcome, list[tuple[int, int]]]:
    """The sweep killed at each of its scenario's points, resumed after each kill."""
    sweeps = Sweeps(tmp)
    run_dir = tmp / "runs" / name
    killed_at: list[tuple[int, int]] = []
    try:
        config = sweep_config(tmp / "c.json", name)
        args = ["run", "--config", str(config), "--storage", str(tmp / "runs"), "--no-dashboard"]
        for index, count in SCENARIOS[name][4]:
            proc = sweeps.start(*args)
            deadline = time.monotonic() + 300

            def due(index: int = index, count: int = count) -> bool:
                trial_id = started(run_dir).get(index)
                return trial_id is not None and reports(run_dir, trial_id) >= count

            while not due() and proc.poll() is None:
                assert time.monotonic() < deadline, f"trial {index} never reported {count} times"
                time.sleep(0.01)
            args = ["resume", str(run_dir), "--no-dashboard"]
            if proc.poll() is not None:  # it finished before the kill (the test says so)
                break
            sweeps.kill_group(proc)
            killed_at.append((index, reports(run_dir, started(run_dir)[index])))
        code, out = sweeps.run(*args, timeout=420)
        assert code == 0, out
        return outcome(run_dir), killed_at
    finally:
        sweeps.close()


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Every scenario's sweeps, uninterrupted and killed, three at a time."""
    scenarios = {}
    for name in SCENARIOS:
        for kind, scenario in (("whole", uninterrupted), ("killed", interrupted)):
            tmp = tmp_path_factory.mktemp(f"{name}-{kind}")
            scenarios[name, kind] = functools.partial(scenario, tmp, name)
    outcomes = together(scenarios, at_once=3)
    yield outcomes
    settle(outcomes)


@pytest.mark.timeout(1200)  # the fixture runs eight sweeps and eight resumes, on 2 cores
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_a_kill_inside_a_trial_loses_no_decision_it_had_earned(runs: Any, name: str) -> None:
    whole = runs[name, "whole"].result()
    killed, killed_at = runs[name, "killed"].result()
    assert len(killed_at) == len(SCENARIOS[name][4]), f"finished before a kill: {killed_at}"
    assert any(status == "stopped" for status, _, _ in whole.values()), whole  # it stops some
    assert killed == whole, (killed_at, killed, whole)
