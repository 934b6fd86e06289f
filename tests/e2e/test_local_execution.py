"""The in-process executor end to end: real `sweep` processes killed with SIGKILL and
SIGINT, resumed exactly once; no Ray started; `sweep repro` (on Ray) matches its trials."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import REPO, Sweeps, sweep_env

pytestmark = pytest.mark.slow

LOCAL_SWEEP: dict[str, Any] = {
    "name": "local",
    "trainable": "lightgbm",
    "trainable_args": {"dataset": "breast_cancer", "num_boost_round": 60, "report_every": 5},
    "metric": "val_loss",
    "mode": "min",
    "space": {
        "learning_rate": {"type": "loguniform", "low": 0.01, "high": 0.3},
        "num_leaves": {"type": "int", "low": 4, "high": 64, "log": True},
        "feature_fraction": {"type": "uniform", "low": 0.5, "high": 1.0},
        "objective": "binary",
    },
    "search": {"algorithm": "optuna", "num_samples": 40, "max_concurrent": 2,
               "options": {"n_startup_trials": 6}},
    "scheduler": {"type": "asha", "max_t": 12, "grace_period": 2, "reduction_factor": 3},
    "seed": 5,
    "checkpoint": {"frequency": 4},
    "execution": "local",
}  # fmt: skip


@pytest.fixture()
def drivers(tmp_path: Path) -> Iterator[Sweeps]:
    d = Sweeps(tmp_path)
    yield d
    d.close()


def config(tmp_path: Path, **changes: Any) -> Path:
    path = tmp_path / "local.json"
    path.write_text(json.dumps({**LOCAL_SWEEP, **changes}))
    return path


def journal_ends(run_dir: Path) -> dict[str, dict[str, Any]]:
    """trial id -> its end record, from local/journal.jsonl (torn lines skipped)."""
    ends: dict[str, dict[str, Any]] = {}
    path = run_dir / "local" / "journal.jsonl"
    for line in path.read_text().splitlines() if path.is_file() else []:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if record.get("e") == "end":
            assert record["id"] not in ends, f"trial {record['id']} ended twice"
            ends[record["id"]] = record
    return ends


def wait_for_ends(run_dir: Path, count: int, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120
    while len(journal_ends(run_dir)) < count:
        assert proc.poll() is None, "the sweep ended before it could be killed"
        assert time.monotonic() < deadline, "no trial finished in 120 s"
        time.sleep(0.02)


def test_killed_local_run_resumes_exactly_once(tmp_path: Path, drivers: Sweeps) -> None:
    run_dir = tmp_path / "runs" / "local"
    proc = drivers.start("run", "--config", str(config(tmp_path)), "--storage", str(run_dir.parent))
    wait_for_ends(run_dir, 6, proc)
    drivers.kill_group(proc)
    before = journal_ends(run_dir)
    assert len(before) < 40

    code, out = drivers.run("status", str(run_dir), "--json")
    status = json.loads(out)
    assert code == 0 and status["status"] == "crashed"
    assert status["source"] == "journal"
    assert sum(n for k, n in status["counts"].items() if k != "unfinished") == len(before)

    code, out = drivers.run("resume", str(run_dir))
    assert code == 0, out
    assert f"{len(before)} finished trial(s) kept" in out
    assert "drew other configs" not in out  # the replayed TPE chain suggested as recorded
    trials = json.loads((run_dir / "results.json").read_text())["trials"]
    assert sorted(t["index"] for t in trials) == list(range(40))  # none lost, none twice
    by_id = {t["trial_id"]: t for t in trials}
    for trial_id, record in before.items():  # finished before the kill: kept as they were
        assert by_id[trial_id]["last"]["val_loss"] == record["rows"][-1]["val_loss"]
        assert by_id[trial_id]["iterations"] == len(record["rows"])
    assert set(journal_ends(run_dir)) == set(by_id)
    ended = Counter(
        json.loads(line)["trial_id"]
        for line in (run_dir / "trials.jsonl").read_text().splitlines()
        if '"ended"' in line
    )
    assert max(ended.values()) == 1


def test_sigint_interrupts_a_local_run_and_resume_finishes_it(
    tmp_path: Path, drivers: Sweeps
) -> None:
    run_dir = tmp_path / "runs" / "local"
    proc = drivers.start("run", "--config", str(config(tmp_path)), "--storage", str(run_dir.parent))
    wait_for_ends(run_dir, 3, proc)
    os.kill(proc.pid, signal.SIGINT)
    code, out = drivers.wait(proc, timeout=60)
    assert code == 130, out
    assert "continue with: sweep resume" in out
    state = json.loads((run_dir / "state.json").read_text())
    assert state["status"] == "interrupted"
    kept = journal_ends(run_dir)
    code, out = drivers.run("resume", str(run_dir))
    assert code == 0, out
    trials = json.loads((run_dir / "results.json").read_text())["trials"]
    assert len(trials) == 40
    assert set(kept) <= {t["trial_id"] for t in trials}


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
