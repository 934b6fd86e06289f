"""Crash safety end to end on the Ray engine: refusals, damaged snapshots, checkpoints.

Kills and signals at several points, then resumes, and extension by
``--num-samples``, are part of the engine contract suite (tests/engines/), which
runs them on every engine.

Every driver runs in its own session (start_new_session=True) so a kill of its
process group takes Ray's gcs/raylet/agents with it, as a crash of the whole
tree would; teardown kills every group a test started, so nothing leaks into
other tests (no `ray stop`, which would hit the session Ray fixture too).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import (
    CRASH_CONFIG,
    Outcome,
    Sweeps,
    crash_config,
    settle,
    together,
    wait_for,
)

pytestmark = pytest.mark.slow


@pytest.fixture()
def drivers(tmp_path: Path) -> Iterator[Sweeps]:
    d = Sweeps(tmp_path)
    yield d
    d.close()


def results(run_dir: Path) -> dict[int, dict[str, Any]]:
    trials = json.loads((run_dir / "results.json").read_text())["trials"]
    assert len({t["trial_id"] for t in trials}) == len(trials), "a trial id appears twice"
    configs = [json.dumps(t["config"], sort_keys=True) for t in trials]
    assert len(set(configs)) == len(configs), "a config appears twice"
    by_index = {t["index"]: t for t in trials}
    assert sorted(by_index) == list(range(len(trials))), "an index is missing or repeated"
    return by_index


def snapshot(run_dir: Path) -> dict[str, tuple[int, bytes]]:
    """Every file's mtime and sha256, to prove a refused command changed nothing."""
    files = sorted(p for p in run_dir.rglob("*") if p.is_file())
    return {
        str(p.relative_to(run_dir)): (p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).digest())
        for p in files
    }


class Baseline:
    """An uninterrupted run with the same config and seed, started in the background.

    It runs while the first test that needs it starts: nothing it checks depends on timing.
    """

    def __init__(self, tmp: Path) -> None:
        self.sweeps = Sweeps(tmp)
        self.proc = self.sweeps.start(
            "run", "--config", str(crash_config(tmp / "c.json")), "--storage", str(tmp / "runs")
        )
        self.run_dir = tmp / "runs" / "crash"

    @functools.cached_property
    def path(self) -> Path:
        """The run directory, once the run has ended (it must succeed)."""
        code, out = self.sweeps.wait(self.proc, timeout=240)
        assert code == 0, out
        return self.run_dir


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Baseline]:
    started = Baseline(tmp_path_factory.mktemp("baseline"))
    yield started
    started.sweeps.close()


def test_changed_config_is_refused_listing_fields_and_nothing_changes(
    tmp_path: Path, drivers: Sweeps, baseline: Baseline
) -> None:
    storage = tmp_path / "runs"
    shutil.copytree(baseline.path, storage / "crash")
    before = snapshot(storage / "crash")
    space = {**CRASH_CONFIG["space"], "x": {"type": "uniform", "low": -5, "high": 6}}
    changed = crash_config(tmp_path / "changed.json", seed=12, space=space)
    code, out = drivers.run("run", "--config", str(changed), "--storage", str(storage), "--resume")
    assert code == 2, out
    assert "seed: 11 → 12" in out and "space.x.high: 5.0 → 6.0" in out, out
    assert "?" not in out.splitlines()[-1]  # a refusal, never a prompt
    code, out = drivers.run(
        "run",
        "--config",
        str(crash_config(tmp_path / "same.json")),
        "--storage",
        str(storage),
        "--resume",
        "--max-concurrent",
        "2",
    )
    assert code == 0 and "nothing to resume" in out, out
    assert snapshot(storage / "crash") == before


@pytest.mark.parametrize("damage", ["tune missing", "state corrupt", "tuner.pkl corrupt"])
def test_missing_or_corrupt_tune_dir_is_refused_and_nothing_deleted(
    tmp_path: Path, drivers: Sweeps, baseline: Baseline, damage: str
) -> None:
    run_dir = tmp_path / "crash"
    shutil.copytree(baseline.path, run_dir)
    state = json.loads((run_dir / "state.json").read_text())
    state["status"] = "interrupted"  # as if it had been stopped
    (run_dir / "state.json").write_text(json.dumps(state))
    if damage == "tune missing":
        shutil.rmtree(run_dir / "tune")
    elif damage == "state corrupt":
        newest = sorted((run_dir / "tune").glob("experiment_state-*.json"))[-1]
        newest.write_text(newest.read_text()[:100])
    else:
        (run_dir / "tune" / "tuner.pkl").write_bytes(b"\x80\x05garbage")
    before = snapshot(run_dir)
    code, out = drivers.run("resume", str(run_dir))
    assert code == 2, out
    assert {
        "tune missing": "tune is missing",
        "state corrupt": "corrupt",
        "tuner.pkl corrupt": "tuner.pkl is corrupt",
    }[damage] in out, out
    assert snapshot(run_dir) == before


def snapshot_checkpoint(run_dir: Path) -> str | None:
    """The checkpoint directory the newest snapshot names for its one trial (None: none yet)."""
    from ray.tune.trainable.metadata import _TrainingRunMetadata

    state = json.loads(sorted(run_dir.glob("tune/experiment_state-*.json"))[-1].read_text())
    (item,) = state["trial_data"]
    manager = _TrainingRunMetadata.from_json_state(item[1]).checkpoint_manager
    latest = manager.latest_checkpoint_result if manager is not None else None
    if latest is None or latest.checkpoint is None:
        return None
    return Path(latest.checkpoint.path).name


FREQUENCIES = (1, 3)


@pytest.fixture(scope="module")
def checkpointing_runs(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[dict[Any, Outcome[None]]]:
    """:func:`killed_checkpointing_trial_resumes` for every frequency, all at once."""
    runs = together(
        {
            frequency: functools.partial(
                killed_checkpointing_trial_resumes, tmp_path_factory.mktemp("ckpt"), frequency
            )
            for frequency in FREQUENCIES
        }
    )
    yield runs
    settle(runs)


@pytest.mark.parametrize("frequency", FREQUENCIES)
def test_checkpointing_trial_continues_from_its_checkpoint_after_kill(
    checkpointing_runs: dict[Any, Outcome[None]], frequency: int
) -> None:
    """examples/checkpointing.py: tune.get_checkpoint() after a kill -9 of the tree.

    With a checkpoint every 3 reports, the rows after the newest checkpoint are
    reported again after the resume: they must not appear twice.
    """
    checkpointing_runs[frequency].result()


def killed_checkpointing_trial_resumes(tmp_path: Path, frequency: int) -> None:
    """One checkpointing trial, killed with its tree, repaired as in the worst case, resumed.

    Its timing does not matter to what it checks, so the frequencies run at once.
    """
    drivers = Sweeps(tmp_path)
    try:
        check_killed_checkpointing_trial_resumes(tmp_path, drivers, frequency)
    finally:
        drivers.close()


def check_killed_checkpointing_trial_resumes(
    tmp_path: Path, drivers: Sweeps, frequency: int
) -> None:
    steps, lr = 200, 0.01
    config = crash_config(
        tmp_path / "ckpt.json",
        name="ckpt",
        trainable="examples.checkpointing:fit",
        space={"x": {"type": "uniform", "low": -5, "high": 5}, "steps": steps, "lr": lr},
        search={"algorithm": "random", "num_samples": 1, "max_concurrent": 1},
        checkpoint={"frequency": frequency, "num_to_keep": 2},
    )
    run_dir = tmp_path / "runs" / "ckpt"
    proc = drivers.start("run", "--config", str(config), "--storage", str(tmp_path / "runs"))

    def checkpoints() -> int:
        found = [int(p.name.split("_")[1]) for p in run_dir.glob("tune/trial_*/checkpoint_*")]
        return max(found, default=-1)

    def snapshotted() -> bool:
        """Ray's experiment snapshot (written every second or so) knows the trial."""
        states = sorted(run_dir.glob("tune/experiment_state-*.json"))
        trials = [p.name.removeprefix("trial_") for p in run_dir.glob("tune/trial_*")]
        return bool(states and trials) and trials[0] in states[-1].read_text()

    wait_for("checkpoint 40", lambda: checkpoints() >= 40 and snapshotted(), proc)
    drivers.kill_group(proc)
    reached = checkpoints()
    assert reached < steps // frequency - 1, "the trial finished before the kill"
    (trial_dir,) = run_dir.glob("tune/trial_*")
    # The snapshot names a checkpoint that still exists (deletions wait for it)...
    named = snapshot_checkpoint(run_dir)
    assert named is None or (trial_dir / named).is_dir(), named
    # ...and the rows in the run directory name every checkpoint registered (the
    # newest on disk may still be on its way to registration).
    rows = [json.loads(line) for line in (trial_dir / "result.json").open()]
    newest = [r["checkpoint_dir_name"] for r in rows if r.get("checkpoint_dir_name")][-1]
    assert int(newest.split("_")[1]) >= reached - 1, (newest, reached)
    # Simulate the worst case of checkpoint rotation racing Ray's asynchronous
    # experiment snapshot: one checkpoint is left on disk, the newest that has rows
    # after it. Those rows are reported again after the resume.
    named = [(i, r["checkpoint_dir_name"]) for i, r in enumerate(rows)]
    keep = [name for i, name in named if name and i < len(rows) - 1][-1]
    for stale in trial_dir.glob("checkpoint_*"):
        if stale.name != keep:
            shutil.rmtree(stale)
    # A checkpoint no snapshot tracks (a deletion held back at the kill): Ray would keep
    # it beyond num_to_keep for ever; the resume deletes it. (The snapshot may be old
    # enough to track the first checkpoints: take a name it does not mention.)
    state = sorted(run_dir.glob("tune/experiment_state-*.json"))[-1].read_text()
    untracked = next(
        name
        for name in (f"checkpoint_{i:06d}" for i in range(reached))
        if name not in state and name != keep
    )
    shutil.copytree(trial_dir / keep, trial_dir / untracked)
    code, out = drivers.run("resume", str(run_dir))
    assert code == 0, out
    # the untracked copy, and any checkpoint a dying worker still wrote after the kill
    # (seen once under load: "2 checkpoint(s)"), are deleted
    assert re.search(r"\b\d+ checkpoint\(s\) it no longer tracks deleted", out), out
    assert not (trial_dir / untracked).exists()
    assert len(list(trial_dir.glob("checkpoint_*"))) == 2  # num_to_keep
    (trial,) = results(run_dir).values()
    x = trial["config"]["x"]
    for _ in range(steps):
        x -= lr * 2 * (x - 3.0)
    assert trial["last"]["loss"] == (x - 3.0) ** 2  # bit-identical to an uninterrupted trial
    assert trial["iterations"] == steps
    rows = [json.loads(line) for line in (trial_dir / "result.json").open()]
    assert [r["training_iteration"] for r in rows] == list(range(1, steps + 1))  # none repeated
