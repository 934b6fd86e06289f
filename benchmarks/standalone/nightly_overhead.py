"""What nightly.sh adds to a night beyond the sweep: ``python -m benchmarks.run nightly_overhead``.

Runs ``--nights`` real nights of a tiny CPU sweep (3 quadratic trials, one at a
time) in a temporary log directory, each warm-started from the night before,
with ``SWEEP_GPUS=none`` so the GPU check runs too. nightly.sh times the sweep
itself (from starting ``sweep run`` to its exit, Ray included) and logs it; the
night's own cost is the process's wall time minus that: bash, the env file and
settings, the lock, the checks (``sweep nightly pending``, df, ``sweep gpus
--require``), the export (``sweep best --export``), the record (``sweep nightly
record``), rotation (``sweep nightly rotate``) and the log lines.

Then each step alone, ``--repeats`` times, as the fresh process nightly.sh starts,
and a failed night (a GPU that does not exist, notified to an HTTP server on
127.0.0.1): no sweep at all, so its whole wall time is nightly.sh's.
Target: under 2 s a night (BENCHMARKS.md, "Nightly service overhead").
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from benchmarks.harness.common import REPO, prog

NIGHTLY = REPO / "nightly.sh"
SWEEP = Path(sys.executable).with_name("sweep")
TARGET_S = 2.0
SWEEP_TIME = re.compile(r"sweep exited (\d+) after ([0-9.]+) s")

CONFIG: dict[str, Any] = {
    "name": "nightly-bench",
    "trainable": "examples.quadratic:fit",
    "metric": "loss",
    "mode": "min",
    "space": {"x": {"type": "uniform", "low": 0, "high": 6}, "steps": 2},
    "search": {"algorithm": "random", "num_samples": 3, "max_concurrent": 1},
    "seed": 3,
}


def night_env(work: Path, ray_tmp: str, **extra: str) -> dict[str, str]:
    """nightly.sh's environment: settings of a real night, nothing from outside leaking in."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k != "RAY_ADDRESS" and not k.lower().endswith("_proxy")
    }
    (work / "empty.env").touch()
    env.update(
        PYTHONPATH=str(REPO),
        RAY_USAGE_STATS_ENABLED="0",
        RAY_TMPDIR=ray_tmp,  # a Ray of its own, whatever else runs on the machine
        SWEEP_BIN=str(SWEEP),
        SWEEP_ENV_FILE=str(work / "empty.env"),
        SWEEP_CONFIG=str(work / "sweep.json"),
        SWEEP_GPUS="none",
        SWEEP_RUN_ARGS="--no-dashboard",
    )
    env.update(extra)
    return env


def run_night(work: Path, env: dict[str, str]) -> tuple[int, float, float | None, str]:
    """(exit code, wall seconds, the sweep's seconds as nightly.sh logged them, output)."""
    started = time.perf_counter()
    done = subprocess.run(
        ["bash", str(NIGHTLY)], cwd=work, env=env, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - started
    match = SWEEP_TIME.search(done.stdout)
    return done.returncode, wall, float(match.group(2)) if match else None, done.stdout


def time_command(args: list[str], env: dict[str, str], cwd: Path, repeats: int) -> list[float]:
    """Wall seconds of ``args`` as a fresh process, ``repeats`` times (it must succeed)."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False)
        times.append(time.perf_counter() - started)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(args)} failed ({done.returncode}): {done.stderr}")
    return times


class Receiver:
    """An HTTP server on 127.0.0.1 that answers 200 to every POST."""

    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def row(name: str, times: Sequence[float]) -> str:
    med = statistics.median(times)
    return f"| {name} | {med:.3f} s | {min(times):.3f}-{max(times):.3f} s |"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=prog("nightly_overhead"), description=(__doc__ or "").splitlines()[0]
    )
    parser.add_argument("--nights", type=int, default=5, help="real nights to run (default 5)")
    parser.add_argument("--repeats", type=int, default=5, help="repeats of each step alone")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="nightly-bench-"))
    ray_tmp = tempfile.mkdtemp(prefix="rb", dir="/tmp")
    try:
        return measure(work, ray_tmp, args.nights, args.repeats)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(ray_tmp, ignore_errors=True)


def measure(work: Path, ray_tmp: str, nights: int, repeats: int) -> int:
    (work / "sweep.json").write_text(json.dumps(CONFIG))
    env = night_env(work, ray_tmp)
    print(f"{nights} nights of {CONFIG['search']['num_samples']} quadratic trials\n")
    print("| night | wall | sweep (Ray included) | nightly.sh's own |\n|---|---|---|---|")
    overheads = []
    for number in range(1, nights + 1):
        code, wall, sweep_s, out = run_night(work, env)
        if code != 0 or sweep_s is None:
            raise SystemExit(f"night {number} failed ({code}):\n{out}")
        overheads.append(wall - sweep_s)
        print(f"| {number} | {wall:.2f} s | {sweep_s:.2f} s | {wall - sweep_s:.3f} s |", flush=True)
    log_dir = work / "sweep_logs"
    runs = sorted(p for p in log_dir.glob("nightly_*") if p.is_dir())
    export = work / "bench_export.json"
    scratch = work / "scratch_logs"
    shutil.copytree(log_dir, scratch)
    steps = {
        "bash, settings, lock (`nightly.sh --help`)": ["bash", str(NIGHTLY), "--help"],
        "`sweep nightly pending`": [str(SWEEP), "nightly", "pending", str(log_dir)],
        "`sweep gpus --require none`": [str(SWEEP), "gpus", "--require", "none"],
        "`sweep best --top 10 --export`": [
            str(SWEEP), "best", str(runs[-1]), "--top", "10", "--export", str(export)
        ],
        "`sweep nightly record`": [
            str(SWEEP), "nightly", "record", str(scratch), "--exit-code", "0",
            "--run", str(runs[-1]), "--payload", str(work / "payload.json"),
        ],
        "`sweep nightly rotate`": [
            str(SWEEP), "nightly", "rotate", str(log_dir), "--keep-days", "14"
        ],
    }  # fmt: skip
    print(f"\nEach step alone, a fresh process, {repeats} repeats\n")
    print("| step | median | min-max |\n|---|---|---|")
    for name, command in steps.items():
        print(row(name, time_command(command, env, work, repeats)), flush=True)
    receiver = Receiver()
    try:
        failed_env = night_env(work, ray_tmp, SWEEP_GPUS="97", SWEEP_NOTIFY_URL=receiver.url)
        failed = []
        for _ in range(repeats):
            code, wall, _sweep, out = run_night(work, failed_env)
            if code != 6:
                raise SystemExit(f"the failed night exited {code}, not 6:\n{out}")
            failed.append(wall)
    finally:
        receiver.close()
    print("\n| a failed night (GPU check), notified, no sweep | median | min-max |")
    print("|---|---|---|")
    print(row("whole night", failed))
    median = statistics.median(overheads)
    verdict = "met" if median < TARGET_S else "MISSED"
    print(
        f"\nnightly.sh's own time a night: median {median:.3f} s (target < {TARGET_S} s: {verdict})"
    )
    return 0 if median < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
