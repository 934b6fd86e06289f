"""``sweep validate`` on every config in sweeps/: ``python -m benchmarks.run validate_time``.

Each validate runs as a fresh process, the way a person or nightly.sh runs it,
``--repeats`` times (default 5); it includes the parameter check of the built-in
trainables (names, owned keys, corner values through the library on a tiny
dataset). Also times the parameter check alone in this process (the library
already imported: what the check itself costs) and the interpreter alone.
Target: sweeps/demo.json under 2 s (BENCHMARKS.md, "Validating a sweep").
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks.harness.common import REPO, prog

SWEEPS = sorted((REPO / "sweeps").glob("*.json"))
TARGET_S = 2.0


def time_validate(config: Path, repeats: int) -> list[float]:
    """Wall time of ``sweep validate --config CONFIG`` as a fresh process, ``repeats`` times."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "raysweep.cli", "validate", "--config", str(config)],
            cwd=REPO, env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        times.append(time.perf_counter() - started)
        if done.returncode != 0:
            raise SystemExit(f"sweep validate {config.name} failed: {done.stderr}")
    return times


def time_check(config: Path, repeats: int) -> list[float]:
    """The parameter check alone, in this process, after a first (warm-up) call."""
    from raysweep.config.load import load_spec
    from raysweep.trainables.checks import check_trainable

    cwd = Path.cwd()
    os.chdir(REPO)  # user trainables import from the working directory
    try:
        spec = load_spec(config)
        check_trainable(spec)
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            check_trainable(spec)
            times.append(time.perf_counter() - started)
        return times
    finally:
        os.chdir(cwd)


def row(name: str, times: list[float]) -> str:
    return f"| {name} | {statistics.median(times):.3f} s | {min(times):.3f}-{max(times):.3f} s |"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=prog("validate_time"), description=__doc__.splitlines()[0]
    )
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    print(f"sweep validate, a fresh process each, {args.repeats} repeats\n")
    print("| config | median | min-max |\n|---|---|---|")
    demo = None
    for config in SWEEPS:
        times = time_validate(config, args.repeats)
        demo = statistics.median(times) if config.name == "demo.json" else demo
        print(row(f"`sweeps/{config.name}`", times), flush=True)
    interpreter = []
    for _ in range(args.repeats):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        interpreter.append(time.perf_counter() - started)
    print(row("`python -c pass` (the interpreter alone)", interpreter))
    print("\nthe check alone (check_trainable, library already imported)\n")
    print("| config | median | min-max |\n|---|---|---|")
    for config in SWEEPS:
        print(row(f"`sweeps/{config.name}`", time_check(config, args.repeats)), flush=True)
    if demo is not None:
        verdict = "meets" if demo < TARGET_S else "MISSES"
        print(f"\nsweeps/demo.json: {demo:.3f} s median, {verdict} the {TARGET_S:g} s target")
    return 0 if demo is None or demo < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
