"""report.html at scale: a synthetic 10,000-trial run directory -> report size and build time.

    python -m benchmarks.run report_scale [--trials 10000] [--repeats 3] [--keep DIR]

The run directory is written through RunDir as the driver writes one: spec.json,
state.json (two invocations: the run and a resume that extended it), results.json,
resource_usage.json (2 GPUs, the monitor's 10,000-sample cap) and, per trial, Ray's
``tune*/trial_<id>/result.json`` with Ray's own row keys. Trials follow an ASHA-like
pattern: about two thirds stopped early at 1-9 iterations, the rest run to 27
(mean ~8 rows per trial), 2% errored. Measured: ``sweep report RUN_DIR`` as a fresh
process (what a user waits for, imports included), and ``write_reports`` alone in a
warm process; the target is report.html under 15 MB, built in under 10 s.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.harness.common import REPO, prog
from raysweep.config.load import parse_spec
from raysweep.results.records import SweepResult, TrialRecord
from raysweep.rundir import Part, RunDir

T0 = 1_795_400_000.0  # 2026-11-23, the synthetic run's start (epoch seconds)
SPACE = {
    "learning_rate": {"type": "loguniform", "low": 0.001, "high": 0.3},
    "num_leaves": {"type": "int", "low": 8, "high": 256, "log": True},
    "feature_fraction": {"type": "uniform", "low": 0.5, "high": 1.0},
    "min_data_in_leaf": {"type": "int", "low": 5, "high": 100, "step": 5},
    "boosting": {"type": "choice", "values": ["gbdt", "goss"]},
    "objective": "binary",
}


def _iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def _config(rng: random.Random) -> dict[str, object]:
    return {
        "learning_rate": math.exp(rng.uniform(math.log(0.001), math.log(0.3))),
        "num_leaves": round(math.exp(rng.uniform(math.log(8), math.log(256)))),
        "feature_fraction": rng.uniform(0.5, 1.0),
        "min_data_in_leaf": rng.randrange(5, 101, 5),
        "boosting": rng.choice(["gbdt", "goss"]),
        "objective": "binary",
    }


def _curve(config: dict[str, object], rng: random.Random, iterations: int) -> list[float]:
    lr = float(config["learning_rate"])  # type: ignore[arg-type]
    floor = 0.08 + 3 * (math.log10(lr) + 1.3) ** 2 / 10 + 0.02 * (config["boosting"] == "goss")
    return [floor + 0.6 * math.exp(-lr * 40 * i) + rng.gauss(0, 0.003) for i in range(1, 28)][
        :iterations
    ]


def _row(trial_id: str, i: int, loss: float, config: dict[str, object], t: float) -> str:
    """A row with Ray's own keys (JsonLoggerCallback), as big as a real one."""
    return json.dumps(
        {
            "val_loss": loss, "timestamp": int(t), "checkpoint_dir_name": None, "done": False,
            "training_iteration": i, "trial_id": trial_id, "date": _iso(t),
            "time_this_iter_s": 0.05, "time_total_s": 0.05 * i, "pid": 4242,
            "hostname": "bench", "node_ip": "127.0.0.1", "config": config,
            "time_since_restore": 0.05 * i, "iterations_since_restore": i,
        }
    )  # fmt: skip


def synthetic_run(path: Path, trials: int = 10_000, seed: int = 0, gpus: int = 2) -> RunDir:
    """Write a finished run of ``trials`` trials in two parts under ``path``; returns it."""
    rng = random.Random(seed)
    run_dir = RunDir(path)
    path.mkdir(parents=True)
    spec = parse_spec(
        {
            "name": path.name, "trainable": "lightgbm", "metric": "val_loss", "mode": "min",
            "space": SPACE, "search": {"algorithm": "optuna", "num_samples": trials},
            "scheduler": {"type": "asha", "max_t": 27, "grace_period": 1}, "seed": seed,
        }
    )  # fmt: skip
    run_dir.write_spec(spec)
    first = trials * 3 // 4
    parts = [Part("tune", first, 0), Part("tune-ext-1", trials - first, first)]
    run_dir.mark("running")
    run_dir.set_parts(parts)
    records = []
    for part in parts:
        for index in range(part.start_index, part.start_index + part.trials):
            trial_id = f"{index:08x}"
            config = _config(rng)
            errored = rng.random() < 0.02
            stop = rng.choice([1, 1, 3, 3, 9, 27, 27]) if not errored else rng.randint(0, 3)
            losses = _curve(config, rng, stop)
            start = T0 + index * 2.0
            rows = [_row(trial_id, i, v, config, start + 0.05 * i) for i, v in enumerate(losses, 1)]
            folder = run_dir.experiment_path(part) / f"trial_{trial_id}"
            folder.mkdir(parents=True)
            (folder / "result.json").write_text("\n".join(rows) + "\n" if rows else "")
            status = "errored" if errored else ("completed" if stop == 27 else "stopped")
            records.append(
                TrialRecord(
                    trial_id=trial_id, index=index, status=status, config=config,
                    seed=rng.getrandbits(31), iterations=len(losses),
                    last={"val_loss": losses[-1], "training_iteration": len(losses)}
                    if losses else {},
                    best_metric=None if errored or not losses else min(losses),
                    error="Traceback (most recent call last):\n  ...\nValueError: synthetic"
                    if errored else None,
                    started_at=_iso(start), ended_at=_iso(start + 0.05 * max(stop, 1) + 1),
                )
            )  # fmt: skip
    run_dir.mark("running")  # the resume that added tune-ext-1, as the CLI records it:
    commands = [
        {"argv": ["sweep", "run", "--config", "sweep.json"], "at": _iso(T0 - 5)},
        {"argv": ["sweep", "resume", str(path), "--num-samples", str(trials)],
         "at": _iso(T0 + first * 2.0)},
    ]  # fmt: skip
    run_dir.update_state(commands=commands)
    _write_usage(run_dir, gpus, duration_s=trials * 2.0)
    run_dir.write_results(
        SweepResult(path.name, "val_loss", "min", records, wall_time_s=trials * 2.0 + 30)
    )
    run_dir.mark("completed", exit_code=0)
    return run_dir


def _write_usage(run_dir: RunDir, gpus: int, duration_s: float, samples: int = 10_000) -> None:
    rng = random.Random(1)
    step = duration_s / samples
    rows = [
        {
            "t": round(T0 + i * step, 3), "cpu_pct": rng.uniform(40, 100),
            "ram_used_mb": 8000 + rng.uniform(0, 2000), "ram_total_mb": 24576.0,
            "gpus": [
                {"index": g, "util_pct": rng.uniform(50, 100), "mem_used_mb": rng.uniform(2e3, 9e3),
                 "mem_total_mb": 81559.0}
                for g in range(gpus)
            ],
        }
        for i in range(samples)
    ]  # fmt: skip
    payload = {"interval_s": step, "gpu_ids": list(range(gpus)), "samples": rows, "summary": {}}
    run_dir.usage_path.write_text(json.dumps(payload))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=prog("report_scale"), description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="write the run directory here and keep it")
    args = parser.parse_args(argv)
    root = args.keep or Path(tempfile.mkdtemp(prefix="report-scale-"))
    run_dir = synthetic_run(root / f"synthetic-{args.trials}", trials=args.trials)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cold, cold_cpu, warm, warm_cpu = [], [], [], []
    loads = [os.getloadavg()[0]]
    for _ in range(args.repeats):
        start, before = time.perf_counter(), _children_cpu()
        subprocess.run(
            [sys.executable, "-m", "raysweep.cli", "report", str(run_dir.path)],
            env=env, check=True, capture_output=True,
        )  # fmt: skip
        cold.append(time.perf_counter() - start)
        cold_cpu.append(_children_cpu() - before)
    from raysweep.report.build import write_reports

    write_reports(run_dir)  # imports and first-call costs out of the warm figure
    for _ in range(args.repeats):
        start, before = time.perf_counter(), time.process_time()
        write_reports(run_dir)
        warm.append(time.perf_counter() - start)
        warm_cpu.append(time.process_time() - before)
    loads.append(os.getloadavg()[0])
    size = run_dir.html_report_path.stat().st_size
    print(f"trials: {args.trials}, load average {loads[0]:.1f} (start), {loads[1]:.1f} (end)")
    print(f"report.html: {size / 1e6:.2f} MB (target < 15 MB)")
    for label, wall, cpu in (
        ("sweep report (fresh process)", cold, cold_cpu),
        ("write_reports (warm process)", warm, warm_cpu),
    ):
        print(
            f"{label}: wall median {statistics.median(wall):.2f} s "
            f"({min(wall):.2f}-{max(wall):.2f}), CPU median {statistics.median(cpu):.2f} s"
        )
    return 0


def _children_cpu() -> float:
    """User + system CPU seconds of the finished child processes so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    sys.exit(main())
