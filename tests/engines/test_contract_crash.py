"""The contract under crashes and signals: real `sweep` processes, real SIGKILL and SIGTERM.

Every driver runs in its own session, so a kill of its process group takes
everything it started with it (Ray's gcs, raylet and workers on the Ray engine,
the trial threads on the local one), as a crash of the whole tree would. Each
engine must end, after its resumes, with exactly ``num_samples`` trials, each
index once, equal to an uninterrupted run of the same config. A SIGTERM or a
Ctrl-C at any moment (in the imports, while Ray starts, in a trial) is an
interruption: exit 130, state saved, resumable. Each kill or signal lands on
something seen (a trial start in ``trials.jsonl``, the driver's first line), but
the first, a second in.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import Sweeps, wait_for
from engine_helpers import contract_sweep, trials_by_index

from raysweep.rundir import RunDir

pytestmark = pytest.mark.slow
NUM_SAMPLES = 6


def crash_sweep(engine: str) -> dict[str, Any]:
    """The contract sweep (Optuna, one trial at a time) with :data:`NUM_SAMPLES` trials
    long enough to be killed in (600 boosting rounds, ~0.3 s in-process)."""
    data = contract_sweep(f"crash-{engine}", "optuna", "fifo", engine)
    data["trainable_args"].update(num_boost_round=600, report_every=150)
    data["search"]["num_samples"] = NUM_SAMPLES
    return data


@pytest.fixture()
def drivers(tmp_path: Path) -> Iterator[Sweeps]:
    sweeps = Sweeps(tmp_path)
    yield sweeps
    sweeps.close()


def ended(run_dir: RunDir) -> dict[int, list[float]]:
    """index -> the metric of every `ended` event written for it (a rerun adds one)."""
    found: dict[int, list[float]] = {}
    for event in run_dir.read_events():
        if event.get("event") == "ended":
            found.setdefault(event["index"], []).append(event["val_loss"])
    return found


def started(run_dir: RunDir, index: int) -> Callable[[], bool]:
    """Whether the trial of ``index`` has started (a `start` event names it)."""
    return lambda: any(
        e.get("event") == "start" and e["index"] == index for e in run_dir.read_events()
    )


def interrupt(
    drivers: Sweeps, proc: subprocess.Popen[str], run_dir: RunDir, signum: int = signal.SIGTERM
) -> None:
    """Signal ``proc``: a graceful stop, exit 130, state saved as interrupted."""
    proc.send_signal(signum)
    code, out = drivers.wait(proc, timeout=90)
    assert code == 130, out
    assert f"continue with: sweep resume {run_dir.path}" in out, out
    state = run_dir.read_state()
    assert (state["status"], state["signal"]) == ("interrupted", signal.Signals(signum).name)


def test_killed_or_signalled_at_several_points_then_resumed_equals_uninterrupted(
    tmp_path: Path, drivers: Sweeps, engine: str
) -> None:
    data = crash_sweep(engine)
    config = tmp_path / "crash.json"
    config.write_text(json.dumps(data))
    # the uninterrupted run of the same config, a driver of its own alongside the others
    uninterrupted = tmp_path / "uninterrupted"
    whole = drivers.start("run", "--config", str(config), "--storage", str(uninterrupted),
                          "--no-dashboard")  # fmt: skip
    run_dir = RunDir(tmp_path / "runs" / data["name"])
    storage = str(run_dir.path.parent)
    kept: dict[int, list[float]] = {}  # trials that ended before a kill: kept as they were

    # 1. Ctrl-C (SIGINT) a second after the start, in the imports.
    first = drivers.start("run", "--config", str(config), "--storage", storage)
    time.sleep(1)
    assert first.poll() is None, drivers.output(first)
    interrupt(drivers, first, run_dir, signal.SIGINT)

    # 2. Resume, SIGTERM once it says what it runs: on the Ray engine, while Ray starts
    #    (whose own SIGTERM handler once ended such a run as failed with exit 15).
    second = drivers.start("resume", str(run_dir.path))
    header = f"Sweep {data['name']!r}: {NUM_SAMPLES} trials"
    wait_for("the sweep's first line", lambda: header in drivers.output(second), second)
    interrupt(drivers, second, run_dir)
    kept.update(ended(run_dir))

    # 3. Resume, SIGKILL the whole tree once the first trial has started.
    third = drivers.start("resume", str(run_dir.path))
    wait_for("trial #0 starts", started(run_dir, 0), third)
    drivers.kill_group(third)
    kept.update(ended(run_dir))
    assert len(kept) < NUM_SAMPLES, "the sweep ended before the kill"
    code, out = drivers.run("status", str(run_dir.path))
    assert code == 0 and "crashed" in out and "sweep resume" in out, out
    code, out = drivers.run("status", str(run_dir.path), "--json")
    status = json.loads(out)
    assert code == 0 and status["status"] == "crashed", out
    if engine == "local":  # counted from its journal, which has every ended trial
        assert status["source"] == "journal"
        assert sum(n for k, n in status["counts"].items() if k != "unfinished") == len(kept)

    # 4. Resume; a second driver on the run is refused naming the first one's pid;
    #    then SIGKILL the driver alone once trial #2 has started.
    fourth = drivers.start("resume", str(run_dir.path))
    wait_for(
        "the resume holds the lock", lambda: run_dir.read_state().get("pid") == fourth.pid, fourth
    )
    code, out = drivers.run("resume", str(run_dir.path))
    assert code == 2 and f"pid {fourth.pid}" in out, out
    code, out = drivers.run("run", "--config", str(config), "--storage", storage, "--resume")
    assert code == 2 and f"pid {fourth.pid}" in out, out
    code, out = drivers.run("status", str(run_dir.path))
    assert f"running (driver pid {fourth.pid}" in out, out
    wait_for("trial #2 starts", started(run_dir, 2), fourth)
    os.kill(fourth.pid, signal.SIGKILL)
    fourth.wait()
    kept.update(ended(run_dir))
    assert "Traceback" not in drivers.output(fourth)  # unaffected by the refused ones
    assert "error:" not in drivers.output(fourth)

    # 5. Resume, SIGTERM once trial #3 has started.
    fifth = drivers.start("resume", str(run_dir.path))
    wait_for("trial #3 starts", started(run_dir, 3), fifth)
    interrupt(drivers, fifth, run_dir)
    kept.update(ended(run_dir))
    code, out = drivers.run("status", str(run_dir.path))
    assert "interrupted by SIGTERM" in out, out

    # 6. Resume and SIGKILL the tree once the last trial has started.
    sixth = drivers.start("resume", str(run_dir.path))
    wait_for("the last trial starts", started(run_dir, NUM_SAMPLES - 1), sixth)
    kept.update(ended(run_dir))
    assert NUM_SAMPLES - 1 not in kept
    drivers.kill_group(sixth)

    # 7. The last resume completes the sweep: the uninterrupted run's trials, index by index.
    code, out = drivers.wait(whole, timeout=300)
    assert code == 0, out
    reference = RunDir(uninterrupted / data["name"])
    code, out = drivers.run("resume", str(run_dir.path))
    assert code == 0, out
    assert "drew other configs" not in out  # a replayed searcher suggests as it did
    final = json.loads(run_dir.results_path.read_text())["trials"]
    assert len({t["trial_id"] for t in final}) == len(final) == NUM_SAMPLES
    assert trials_by_index(run_dir) == trials_by_index(reference)
    for index, values in kept.items():
        assert {*values} == {trials_by_index(run_dir)[index][2]["val_loss"]}, f"#{index} changed"
    if engine == "local":  # its journal keeps every ended trial: none runs twice
        assert "finished trial(s) kept" in out
        ends = [e["trial_id"] for e in run_dir.read_events() if e.get("event") == "ended"]
        assert sorted(ends) == sorted({*ends})
        journal = [json.loads(line) for line in run_dir.journal_path.read_text().splitlines()]
        assert sorted(r["id"] for r in journal if r.get("e") == "end") == sorted(
            t["trial_id"] for t in final
        )
    best, best_reference = (json.loads((r.path / "best_config.json").read_text())
                            for r in (run_dir, reference))  # fmt: skip
    assert (best["value"], best["config"]) == (best_reference["value"], best_reference["config"])
    state = run_dir.read_state()
    assert state["status"] == "completed" and len(state["commands"]) == 7
