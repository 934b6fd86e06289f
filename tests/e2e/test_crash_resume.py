"""Crash safety end to end: real `sweep` processes, real Ray, killed and resumed.

Every driver runs in its own session (start_new_session=True) so a kill of its
process group takes Ray's gcs/raylet/agents with it, as a crash of the whole
tree would; teardown kills every group a test started, so nothing leaks into
other tests (no `ray stop`, which would hit the session Ray fixture too).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import CRASH_CONFIG, Outcome, Sweeps, crash_config, settle, together

pytestmark = pytest.mark.slow


@pytest.fixture()
def drivers(tmp_path: Path) -> Iterator[Sweeps]:
    d = Sweeps(tmp_path)
    yield d
    d.close()


def events(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / "trials.jsonl"
    if not path.is_file():
        return []
    out = []
    for line in path.read_text().splitlines():
        with contextlib.suppress(ValueError):
            out.append(json.loads(line))
    return out


def ended(run_dir: Path) -> dict[int, list[float]]:
    """index -> every loss reported by an `ended` event for it (reruns included)."""
    found: dict[int, list[float]] = {}
    for e in events(run_dir):
        if e["event"] == "ended":
            found.setdefault(e["index"], []).append(e["loss"])
    return found


def wait_for(what: str, check: Callable[[], bool], proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120
    while not check():
        assert proc.poll() is None, f"driver exited ({proc.returncode}) before: {what}"
        assert time.monotonic() < deadline, f"timed out waiting for: {what}"
        time.sleep(0.05)


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

    It runs alongside the first test's drivers: nothing it checks depends on timing.
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


def test_killed_at_several_points_then_resumed_equals_uninterrupted(
    tmp_path: Path, drivers: Sweeps, baseline: Baseline
) -> None:
    run_dir = tmp_path / "runs" / "crash"
    config = crash_config(tmp_path / "c.json")
    finished_before_kills: dict[int, list[float]] = {}

    # 1. SIGKILL the whole tree while the first trial runs: nothing has finished.
    first = drivers.start("run", "--config", str(config), "--storage", str(tmp_path / "runs"))
    wait_for("a trial starts", lambda: any(e["event"] == "start" for e in events(run_dir)), first)
    drivers.kill_group(first)
    assert ended(run_dir) == {}
    code, out = drivers.run("status", str(run_dir))
    assert code == 0 and "crashed" in out and "sweep resume" in out, out

    # 2. Resume; a second driver on the same directory is refused naming the first's pid;
    #    then SIGKILL only the driver pid in mid-sweep (Ray's own processes are orphaned).
    second = drivers.start("resume", str(run_dir))
    wait_for(
        "the resume holds the lock",
        lambda: json.loads((run_dir / "state.json").read_text()).get("pid") == second.pid,
        second,
    )
    code, out = drivers.run("resume", str(run_dir))
    assert code == 2 and f"pid {second.pid}" in out, out
    code, out = drivers.run(
        "run", "--config", str(config), "--storage", str(tmp_path / "runs"), "--resume"
    )
    assert code == 2 and f"pid {second.pid}" in out, out
    code, out = drivers.run("status", str(run_dir))
    assert f"running (driver pid {second.pid}" in out, out
    wait_for("3 trials end", lambda: len(ended(run_dir)) >= 3, second)
    finished_before_kills.update(ended(run_dir))
    os.kill(second.pid, signal.SIGKILL)
    second.wait()
    assert "Traceback" not in drivers.output(second)  # unaffected by the refused ones
    assert "error:" not in drivers.output(second)

    # 3. Resume, then SIGTERM: graceful stop, exit 130, status interrupted.
    third = drivers.start("resume", str(run_dir))
    done = len(ended(run_dir))
    wait_for("one more trial ends", lambda: len(ended(run_dir)) > done, third)
    finished_before_kills.update(ended(run_dir))
    third.send_signal(signal.SIGTERM)
    assert third.wait(timeout=60) == 130, drivers.output(third)
    state = json.loads((run_dir / "state.json").read_text())
    assert (state["status"], state["signal"]) == ("interrupted", "SIGTERM")
    code, out = drivers.run("status", str(run_dir))
    assert "interrupted by SIGTERM" in out, out

    # 4. Resume and SIGKILL the tree during the last trial.
    fourth = drivers.start("resume", str(run_dir))
    wait_for(
        "the last trial starts",
        lambda: any(e["event"] == "start" and e["index"] == 5 for e in events(run_dir)),
        fourth,
    )
    assert 5 not in ended(run_dir)
    finished_before_kills.update(ended(run_dir))
    drivers.kill_group(fourth)

    # 5. The final resume completes the sweep.
    code, out = drivers.run("resume", str(run_dir))
    assert code == 0, out
    final, reference = results(run_dir), results(baseline.path)
    assert len(final) == CRASH_CONFIG["search"]["num_samples"]
    for index, losses in finished_before_kills.items():
        assert {*losses} == {final[index]["last"]["loss"]}, f"trial #{index} changed"
    for index, trial in final.items():
        assert trial["status"] == "completed"
        assert trial["config"] == reference[index]["config"]
        metrics = ("loss", "step", "training_iteration")  # not Ray's "done" bookkeeping flag
        assert [trial["last"][k] for k in metrics] == [reference[index]["last"][k] for k in metrics]
        assert trial["best_metric"] == reference[index]["best_metric"]
        assert trial["seed"] == reference[index]["seed"]
    best, best_ref = (
        json.loads((r / "best_config.json").read_text()) for r in (run_dir, baseline.path)
    )
    assert (best["value"], best["config"]) == (best_ref["value"], best_ref["config"])
    assert json.loads((run_dir / "state.json").read_text())["status"] == "completed"
    assert len(json.loads((run_dir / "state.json").read_text())["commands"]) == 5


def test_extension_runs_only_the_extra_trials(
    tmp_path: Path, drivers: Sweeps, baseline: Baseline
) -> None:
    from raysweep.repro.seeds import trial_seed_for
    from raysweep.search.variants import VariantSearcher

    run_dir = tmp_path / "crash"
    shutil.copytree(baseline.path, run_dir)
    starts_before = sum(e["event"] == "start" for e in events(run_dir))
    code, out = drivers.run("resume", str(run_dir), "--num-samples", "8")
    assert code == 0, out
    final, reference = results(run_dir), results(baseline.path)
    assert len(final) == 8
    for index in range(6):  # the first part is kept as it was
        assert final[index] == reference[index]
    assert sum(e["event"] == "start" for e in events(run_dir)) - starts_before == 2
    assert len(list((run_dir / "tune-ext-1").glob("trial_*"))) == 2
    # The seeded random sequence continues where it stopped; seeds follow the index.
    space = {k: v for k, v in CRASH_CONFIG["space"].items()}
    from raysweep.config.load import parse_spec
    from raysweep.search.space import to_param_space

    spec = parse_spec({**CRASH_CONFIG, "search": {**CRASH_CONFIG["search"], "num_samples": 8}})
    searcher = VariantSearcher(to_param_space(spec.space), num_samples=8, seed=11)
    expected = [searcher.suggest(str(i)) for i in range(8)]
    for index in (6, 7):
        assert final[index]["config"] == expected[index], space
        assert final[index]["seed"] == trial_seed_for(11, index)
    stored = json.loads((run_dir / "spec.json").read_text())["spec"]
    assert stored["search"]["num_samples"] == 8
    code, out = drivers.run("resume", str(run_dir))
    assert code == 0 and "nothing to resume" in out, out


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
    assert "1 checkpoint(s) it no longer tracks deleted" in out, out
    assert len(list(trial_dir.glob("checkpoint_*"))) == 2  # num_to_keep
    (trial,) = results(run_dir).values()
    x = trial["config"]["x"]
    for _ in range(steps):
        x -= lr * 2 * (x - 3.0)
    assert trial["last"]["loss"] == (x - 3.0) ** 2  # bit-identical to an uninterrupted trial
    assert trial["iterations"] == steps
    rows = [json.loads(line) for line in (trial_dir / "result.json").open()]
    assert [r["training_iteration"] for r in rows] == list(range(1, steps + 1))  # none repeated
