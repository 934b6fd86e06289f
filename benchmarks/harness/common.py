"""Shared harness: statistics, machine/version facts, results and command lines.

It imports nothing else of the harness; the launch harness (``launch``) builds on it.
"""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
RESULTS_DIR = REPO / "benchmarks" / "results"
BENCHMARKS_MD = REPO / "benchmarks" / "BENCHMARKS.md"
PYTHON = sys.executable
# where the launch harness asks the benchmark trainables to drop their first-call markers
MARKER_ENV = "RAYSWEEP_BENCH_MARKERS"
# every benchmark runs through it: the suite, or one benchmark by name with its own flags
RUNNER = ("python", "-m", "benchmarks.run")
PACKAGES = ("raysweep", "ray", "optuna", "hyperopt", "lightgbm", "torch", "numpy", "psutil")


def summarize(values: Iterable[float | None]) -> dict[str, Any]:
    """``{"median", "min", "max", "n", "values"}`` of the values that are not None."""
    kept = [float(v) for v in values if v is not None]
    if not kept:
        return {"median": None, "min": None, "max": None, "n": 0, "values": []}
    return {
        "median": statistics.median(kept),
        "min": min(kept),
        "max": max(kept),
        "n": len(kept),
        "values": kept,
    }


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    """numerator / denominator, None when either is missing or the denominator is 0."""
    if numerator is None or not denominator:
        return None
    return numerator / denominator


def versions() -> dict[str, str | None]:
    """Installed versions of the packages that matter for the figures."""
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    if out["raysweep"] is None:  # run from a checkout that is not installed (a GPU host)
        try:
            import raysweep
        except ImportError:
            return out
        out["raysweep"] = f"{raysweep.__version__} (source tree)"
    return out


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def gpu_names() -> list[str]:
    """NVIDIA GPU names from nvidia-smi ([] when there is none)."""
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [line.strip() for line in out.splitlines() if line.strip()]


def machine() -> dict[str, Any]:
    """What the figures were taken on (host facts plus the load just before)."""
    import psutil

    return {
        "platform": platform.platform(),
        "cpu": _cpu_model(),
        "logical_cpus": os.cpu_count(),
        "memory_gb": round(psutil.virtual_memory().total / 2**30, 1),
        "gpus": gpu_names(),
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }


def meta(command: Sequence[str]) -> dict[str, Any]:
    """Date, machine, versions and the command that reproduces a result."""
    return {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine(),
        "versions": versions(),
        "command": shlex.join(command),
    }


def bench_command(name: str, quick: bool = False, extra: Sequence[str] = ()) -> list[str]:
    """The command line that reruns one benchmark: ``python -m benchmarks.run NAME [flags]``."""
    return [*RUNNER, name, *(["--quick"] if quick else []), *extra]


def prog(name: str | None = None) -> str:
    """The program a --help names: ``python -m benchmarks.run``, with ``NAME`` for one benchmark."""
    return shlex.join(RUNNER if name is None else bench_command(name))


def result_path(results_dir: Path, name: str, quick: bool) -> Path:
    """``<results_dir>/<name>.json`` (``<name>.quick.json`` for --quick runs)."""
    return results_dir / f"{name}{'.quick' if quick else ''}.json"


def write_result(results_dir: Path, name: str, quick: bool, payload: dict[str, Any]) -> Path:
    """Write one benchmark's JSON (temp file + rename) and return its path."""
    results_dir.mkdir(parents=True, exist_ok=True)
    path = result_path(results_dir, name, quick)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(payload, indent=2, default=str) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def load_result(results_dir: Path, name: str, quick: bool = False) -> dict[str, Any] | None:
    """A benchmark's last JSON, or None."""
    path = result_path(results_dir, name, quick)
    if not path.is_file():
        return None
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def target(name: str, value: float | None, op: str, bound: float, unit: str = "") -> dict[str, Any]:
    """A target check: ``value op bound`` (op one of ``>=``, ``<=``, ``<``)."""
    met: bool | None
    if value is None:
        met = None
    elif op == ">=":
        met = value >= bound
    elif op == "<=":
        met = value <= bound
    elif op == "<":
        met = value < bound
    else:
        raise ValueError(f"unknown op {op!r}")
    return {"name": name, "value": value, "op": op, "bound": bound, "unit": unit, "met": met}


def log(message: str) -> None:
    """Progress to stderr (stdout stays clean for JSON consumers)."""
    print(f"[bench] {message}", file=sys.stderr, flush=True)
