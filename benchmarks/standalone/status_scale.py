"""Read-only commands on a big run: ``python -m benchmarks.run status_scale [--trials N]``.

Builds a finished run directory of N trials (default 10,000) through RunDir, as
the driver writes it, plus a live one (state ``running``, N events in
trials.jsonl), then times each command as a whole process (``sweep status``,
``best``, ``list``), the way a person or a script runs them. Target: ``sweep
status`` under 1 s on 10,000 trials (BENCHMARKS.md, "Read-only commands").
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks.harness.common import REPO, prog


def build_run(path: Path, trials: int, live: bool) -> None:
    """A run directory of ``trials`` trials; ``live``: still running (events only)."""
    from raysweep.config.load import parse_spec
    from raysweep.results.records import SweepResult, TrialRecord
    from raysweep.rundir import Part, RunDir

    run_dir = RunDir(path)
    path.mkdir(parents=True)
    spec = parse_spec(
        {
            "name": path.name,
            "trainable": "lightgbm",
            "trainable_args": {"dataset": "breast_cancer"},
            "metric": "val_loss",
            "mode": "min",
            "space": {
                "learning_rate": {"type": "loguniform", "low": 0.001, "high": 0.3},
                "num_leaves": {"type": "int", "low": 8, "high": 256},
            },
            "search": {"algorithm": "random", "num_samples": trials},
        }
    )
    run_dir.write_spec(spec)
    run_dir.mark("running")
    run_dir.set_parts([Part("tune", trials)])
    if live:
        with run_dir.events_path.open("w") as events:
            for i in range(trials):
                start = {"event": "start", "trial_id": f"t{i:06d}", "index": i, "t": i}
                events.write(json.dumps(start) + "\n")
                if i < trials - 4:
                    end = {**start, "event": "ended", "val_loss": 1.0 / (i + 1)}
                    events.write(json.dumps(end) + "\n")
        return
    records = [
        TrialRecord(
            trial_id=f"t{i:06d}",
            index=i,
            status="completed" if i % 3 else "stopped",
            config={"learning_rate": 0.001 + i * 1e-5, "num_leaves": 8 + i % 248},
            seed=1_000_000 + i,
            iterations=60,
            last={"val_loss": 0.1 + (i % 97) / 1000, "rounds": 60, "training_iteration": 60},
            best_metric=0.1 + (i % 97) / 1000,
            started_at="2026-11-24T02:00:00Z",
            ended_at="2026-11-24T02:00:05Z",
        )
        for i in range(trials)
    ]
    result = SweepResult(name=path.name, metric="val_loss", mode="min", trials=records)
    run_dir.write_results(result)
    run_dir.write_report("report\n")
    run_dir.mark("completed", exit_code=0)


def time_command(args: Sequence[str], repeats: int) -> list[float]:
    """Wall time of ``sweep ARGS`` as a fresh process, ``repeats`` times."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "raysweep.cli", *args],
            env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        times.append(time.perf_counter() - started)
        if done.returncode != 0:
            raise SystemExit(f"sweep {' '.join(args)} failed: {done.stderr}")
    return times


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=prog("status_scale"), description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="raysweep-status-") as tmp:
        storage = Path(tmp) / "runs"
        build_run(storage / "finished", args.trials, live=False)
        build_run(storage / "live", args.trials, live=True)
        size = (storage / "finished" / "results.json").stat().st_size / 1e6
        print(f"{args.trials} trials; results.json {size:.1f} MB; {args.repeats} repeats")
        cases = {
            "sweep status (finished)": ["status", str(storage / "finished")],
            "sweep status (live)": ["status", str(storage / "live")],
            "sweep best --top 10": ["best", str(storage / "finished"), "--top", "10"],
            "sweep list": ["list", "--storage", str(storage)],
            "python -c pass (interpreter alone)": None,
        }
        for name, command in cases.items():
            if command is None:
                times = []
                for _ in range(args.repeats):
                    started = time.perf_counter()
                    subprocess.run([sys.executable, "-c", "pass"], check=True)
                    times.append(time.perf_counter() - started)
            else:
                times = time_command(command, args.repeats)
            print(
                f"{name:<36} median {statistics.median(times):.3f} s "
                f"(min {min(times):.3f}, max {max(times):.3f})"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
