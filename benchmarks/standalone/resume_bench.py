"""Resume benchmark: ``python -m benchmarks.run resume_bench [--repeats N]`` -> JSON on stdout.

Measures, with real ``sweep`` processes killed by SIGKILL (whole process group):

1. ``resume_to_first_trial_s``: from launching ``sweep resume`` to the first trial
   start it records in trials.jsonl (Ray start-up + Tuner.restore + scheduling),
   next to ``run_to_first_trial_s`` for a fresh ``sweep run`` on the same machine;
2. ``repeated_iterations``: iterations run twice after a kill in the middle of a
   trial, for a trainable that checkpoints every iteration and one that never
   does (then Ray restarts the trial from scratch).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.harness.common import REPO, bench_command, prog

NAME = "resume_bench"
TRAINABLE = f"benchmarks.standalone.{NAME}:train"  # train() below, as a sweep names it
SWEEP = [sys.executable, "-m", "raysweep.cli"]
STEPS, STEP_S = 40, 0.1


def train(config: dict[str, Any]) -> None:
    """STEPS iterations of STEP_S; a checkpoint every ``ckpt_every`` (0: none).

    Every executed iteration appends a line to ``config["trace"]``: the work done,
    whatever Ray keeps in result.json (it starts that file over for a trial
    restarted from scratch).
    """
    from ray import tune

    every, start = int(config["ckpt_every"]), 0
    checkpoint = tune.get_checkpoint()
    if checkpoint is not None:
        with checkpoint.as_directory() as path:
            start = int(Path(path, "step").read_text())
    for step in range(start + 1, STEPS + 1):
        time.sleep(STEP_S)
        fd = os.open(config["trace"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(fd, f"{step}\n".encode())
        os.close(fd)
        loss = float(config["x"]) / step
        if every and step % every == 0:
            with tempfile.TemporaryDirectory() as tmp:
                Path(tmp, "step").write_text(str(step))
                tune.report({"loss": loss}, checkpoint=tune.Checkpoint.from_directory(tmp))
        else:
            tune.report({"loss": loss})


def _config(name: str, trainable: str, space: dict[str, Any], samples: int) -> dict[str, Any]:
    return {
        "name": name,
        "trainable": trainable,
        "metric": "loss",
        "mode": "min",
        "space": space,
        "search": {"algorithm": "random", "num_samples": samples, "max_concurrent": 1},
        "seed": 1,
        "checkpoint": {"frequency": 1, "num_to_keep": 2},
    }


def _start(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "RAY_USAGE_STATS_ENABLED": "0"}
    with log.open("ab") as out:
        return subprocess.Popen(
            [*SWEEP, *args],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def _kill_tree(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _starts(run_dir: Path) -> list[float]:
    path = run_dir / "trials.jsonl"
    if not path.is_file():
        return []
    times = []
    for line in path.read_text().splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("event") == "start":
            times.append(float(event["t"]))
    return times


def _wait(what: str, check: Any, proc: subprocess.Popen[bytes], timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"gave up waiting for {what} (exit {proc.returncode})")
        time.sleep(0.02)


def first_trial_latency(tmp: Path) -> dict[str, float]:
    """Seconds from launching `sweep run` / `sweep resume` to their first trial start."""
    tmp.mkdir(parents=True, exist_ok=True)
    space = {"x": {"type": "uniform", "low": 0, "high": 1}, "sleep_s": 1.0}
    config = tmp / "sleep.json"
    config.write_text(json.dumps(_config("sleep", "examples.quadratic:sleeper", space, 6)))
    run_dir, log = tmp / "runs" / "sleep", tmp / "sleep.log"
    t0 = time.time()
    proc = _start(["run", "--config", str(config), "--storage", str(tmp / "runs")], log)
    _wait("the first trial", lambda: len(_starts(run_dir)) >= 1, proc)
    run_s = _starts(run_dir)[0] - t0
    _wait("the second trial", lambda: len(_starts(run_dir)) >= 2, proc)
    _kill_tree(proc)
    before = len(_starts(run_dir))
    t0 = time.time()
    proc = _start(["resume", str(run_dir)], log)
    _wait("a resumed trial", lambda: len(_starts(run_dir)) > before, proc)
    resume_s = _starts(run_dir)[before] - t0
    _kill_tree(proc)
    return {"run_to_first_trial_s": run_s, "resume_to_first_trial_s": resume_s}


def repeated_work(tmp: Path, ckpt_every: int, kill_at: int = 25) -> dict[str, Any]:
    """Kill -9 at iteration ``kill_at`` of a STEPS-iteration trial, resume, count repeats."""
    tmp.mkdir(parents=True, exist_ok=True)
    name = f"ckpt{ckpt_every}"
    trace = tmp / f"{name}.trace"
    space = {"x": 1.0, "ckpt_every": ckpt_every, "trace": str(trace)}
    config = tmp / f"{name}.json"
    config.write_text(json.dumps(_config(name, TRAINABLE, space, 1)))
    run_dir, log = tmp / "runs" / name, tmp / f"{name}.log"

    def rows() -> list[dict[str, Any]]:
        found = list(run_dir.glob("tune/trial_*/result.json"))
        if not found:
            return []
        lines = found[0].read_text().splitlines()
        return [json.loads(line) for line in lines[:-1]]  # the last line may be torn

    proc = _start(["run", "--config", str(config), "--storage", str(tmp / "runs")], log)
    _wait(f"iteration {kill_at}", lambda: len(rows()) >= kill_at, proc)
    _kill_tree(proc)
    done_before_kill = len(trace.read_text().splitlines())  # iterations executed
    proc = _start(["resume", str(run_dir)], log)
    if proc.wait(timeout=600) != 0:
        raise RuntimeError(f"resume failed, see {log}")
    repeated = len(trace.read_text().splitlines()) - STEPS
    return {
        "checkpoint_every": ckpt_every,
        "iterations": STEPS,
        "iterations_done_before_kill": done_before_kill,
        "repeated_iterations": repeated,
        "repeated_work_s": round(repeated * STEP_S, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=prog(NAME), description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="latency repeats (median)")
    args = parser.parse_args(argv)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="resume-bench-") as tmp:
        latencies = [first_trial_latency(Path(tmp, f"lat{i}")) for i in range(args.repeats)]
        repeated = [repeated_work(Path(tmp, "work"), every) for every in (1, 5, 0)]
    result = {
        "benchmark": "resume",
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "ray": __import__("ray").__version__,
        },
        "command": shlex.join(bench_command(NAME, extra=sys.argv[1:] if argv is None else argv)),
        "repeats": args.repeats,
        "run_to_first_trial_s": _summary([x["run_to_first_trial_s"] for x in latencies]),
        "resume_to_first_trial_s": _summary([x["resume_to_first_trial_s"] for x in latencies]),
        "repeated_after_mid_trial_kill": repeated,
        "wall_s": round(time.monotonic() - started, 1),
    }
    json.dump(result, sys.stdout, indent=2)
    print()
    return 0


def _summary(values: list[float]) -> dict[str, float]:
    return {
        "median": round(statistics.median(values), 2),
        "min": round(min(values), 2),
        "max": round(max(values), 2),
    }


if __name__ == "__main__":
    sys.exit(main())
