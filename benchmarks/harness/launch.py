"""Start ``sweep run`` or a raw Ray Tune script as a subprocess and time it from outside.

Also what a benchmark does with its launches: repeat them interleaved, count the
ones that failed and put them in its result.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.harness.common import MARKER_ENV, PYTHON, REPO, log

RSS_INTERVAL_S = 0.2
PYTHONPATH_ENV = "RAYSWEEP_BENCH_PYTHONPATH"


@dataclass
class Launch:
    """One timed subprocess run (all times in seconds; ``None`` when not measured)."""

    variant: str
    returncode: int
    process_s: float  # Popen -> exit, seen from outside
    fit_s: float | None = None  # Tuner.fit() wall time
    ray_init_s: float | None = None  # ray.init() wall time
    first_trial_s: float | None = None  # Popen -> first trial body running
    startup_s: float | None = None  # Popen -> fit() called
    teardown_s: float | None = None  # fit() returned -> exit
    driver_peak_rss_mb: float | None = None  # sampled with psutil
    driver_maxrss_mb: float | None = None  # getrusage at exit (sweep only)
    fit_driver_cpu_s: float | None = None  # driver CPU time inside Tuner.fit() (sweep only)
    run_dir: str | None = None
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """A plain dict for the results file."""
        return asdict(self)


def subprocess_env(pythonpath: Sequence[Path] = (), **extra: str) -> dict[str, str]:
    """This environment with the repository importable.

    Prototype trees (``pythonpath``, then ``$RAYSWEEP_BENCH_PYTHONPATH``) come
    first, so a private copy of ``src`` can stand in for the installed raysweep.
    """
    env = dict(os.environ)
    paths = [str(p) for p in pythonpath]
    if env.get(PYTHONPATH_ENV):
        paths.append(env[PYTHONPATH_ENV])
    paths.append(str(REPO))
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env.update(extra)
    return env


class _RssSampler(threading.Thread):
    """Peak RSS of one process, sampled every RSS_INTERVAL_S."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.peak = 0
        self.stop = threading.Event()

    def run(self) -> None:
        import psutil

        try:
            proc = psutil.Process(self.pid)
            while not self.stop.is_set():
                self.peak = max(self.peak, proc.memory_info().rss)
                self.stop.wait(RSS_INTERVAL_S)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            return


@contextmanager
def workdir(prefix: str, keep: bool = False) -> Iterator[Path]:
    """A temporary directory (left in place when ``keep``)."""
    if keep:
        yield Path(tempfile.mkdtemp(prefix=f"raysweep-bench-{prefix}-"))
        return
    with tempfile.TemporaryDirectory(prefix=f"raysweep-bench-{prefix}-") as tmp:
        yield Path(tmp)


def _first_marker(markers: Path) -> float | None:
    stamps = []
    for path in markers.glob("*.txt"):
        try:
            stamps.append(float(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
    return min(stamps) if stamps else None


def _run(
    variant: str, cmd: list[str], cwd: Path, env: dict[str, str], timeout: float
) -> tuple[Launch, float]:
    markers = cwd / "markers"
    markers.mkdir(exist_ok=True)
    env = {**env, MARKER_ENV: str(markers)}
    log(f"{variant}: {' '.join(cmd[2:6])} ...")
    started = time.time()
    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group: a timeout kills Ray's processes too
    )
    sampler = _RssSampler(proc.pid)
    sampler.start()
    timed_out = False
    try:
        output, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        output += f"\n[bench] killed after {timeout:.0f} s"
    ended = time.time()
    sampler.stop.set()
    sampler.join()
    first = _first_marker(markers)
    launch = Launch(
        variant=variant,
        returncode=proc.returncode,
        process_s=ended - started,
        first_trial_s=None if first is None else first - started,
        driver_peak_rss_mb=sampler.peak / 2**20 or None,
    )
    if timed_out:
        launch.extra["timed_out_after_s"] = timeout
    if proc.returncode != 0:
        launch.error = output[-3000:]
        log(f"{variant}: exit {proc.returncode}\n{output[-3000:]}")
    return launch, started


def launch_command(
    variant: str, cmd: list[str], cwd: Path, timeout: float = 3600
) -> tuple[Launch, float]:
    """Any command, timed from outside: its :class:`Launch` and its Popen time."""
    return _run(variant, cmd, cwd, subprocess_env(), timeout)


def _apply_timings(launch: Launch, timings_path: Path, started: float) -> None:
    if not timings_path.is_file():
        return
    t = json.loads(timings_path.read_text(encoding="utf-8"))
    if "fit_start" in t and "fit_end" in t:
        launch.fit_s = t["fit_end"] - t["fit_start"]
        launch.startup_s = t["fit_start"] - started
        launch.teardown_s = started + launch.process_s - t["fit_end"]
    if "ray_start" in t and "ray_end" in t:
        launch.ray_init_s = t["ray_end"] - t["ray_start"]
    launch.driver_maxrss_mb = t.get("driver_maxrss_mb")
    launch.fit_driver_cpu_s = t.get("fit_driver_cpu_s")
    launch.extra["timings"] = {
        k: (v - started if k.endswith(("_start", "_end", "started", "imported", "exit")) else v)
        for k, v in t.items()
    }


def launch_sweep(
    variant: str,
    config: dict[str, Any],
    cwd: Path,
    *,
    args: Sequence[str] = (),
    pythonpath: Sequence[Path] = (),
    env: dict[str, str] | None = None,
    timeout: float = 3600,
) -> Launch:
    """``sweep run`` on ``config`` written to ``cwd/sweep.json``; the run goes to ``cwd/runs``."""
    (cwd / "sweep.json").write_text(json.dumps(config, indent=1), encoding="utf-8")
    timings = cwd / "timings.json"
    cmd = [PYTHON, "-m", "benchmarks.harness.probe", "--timings", str(timings)]
    cmd += ["run", "--config", "sweep.json"]
    cmd += ["--storage", str(cwd / "runs"), *args]
    launch, started = _run(variant, cmd, cwd, subprocess_env(pythonpath, **(env or {})), timeout)
    _apply_timings(launch, timings, started)
    launch.extra["popen_t"] = started
    launch.run_dir = str(cwd / "runs" / config["name"])
    launch.extra.update(trial_events(Path(launch.run_dir) / "trials.jsonl"))
    launch.extra.update(fit_phases(launch, started))
    return launch


def trial_events(path: Path) -> dict[str, Any]:
    """Finished trials, steady throughput (second half of the trial ends) and the span.

    From trials.jsonl: ``first_start_t``/``first_end_t``/``last_end_t`` are the
    wall-clock times (``time.time()``) of the first trial start and the first and
    last trial ends, ``None`` when there were none.
    """
    starts: list[float] = []
    ends: list[float] = []
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("event") == "start":
                starts.append(float(event["t"]))
            elif event.get("event") in ("ended", "errored"):
                ends.append(float(event["t"]))
    ends.sort()
    half = len(ends) // 2
    steady = None
    if len(ends) >= 8 and ends[-1] > ends[half]:
        steady = (len(ends) - 1 - half) / (ends[-1] - ends[half])
    return {
        "finished": len(ends),
        "steady_trials_per_s": steady,
        "first_start_t": min(starts, default=None),
        "first_end_t": ends[0] if ends else None,
        "last_end_t": ends[-1] if ends else None,
    }


def fit_phases(launch: Launch, started: float) -> dict[str, float | None]:
    """Where a sweep's fit time went: before the first trial, to its end, after the last.

    ``started`` is the launch's Popen time; needs :func:`trial_events`' span and the
    probe's timings in ``launch.extra``.
    """
    timings = launch.extra.get("timings", {})
    if "fit_start" not in timings or "fit_end" not in timings:
        return {}
    fit_start, fit_end = started + timings["fit_start"], started + timings["fit_end"]

    def since_fit(key: str) -> float | None:
        t = launch.extra.get(key)
        return None if t is None else t - fit_start

    last = launch.extra.get("last_end_t")
    return {
        "to_first_trial_start_s": since_fit("first_start_t"),
        "to_first_trial_end_s": since_fit("first_end_t"),
        "after_last_trial_s": None if last is None else fit_end - last,
    }


def launch_raw(
    variant: str,
    trainable: str,
    num_samples: int,
    cwd: Path,
    *,
    cpus: int = 2,
    reuse_actors: bool = False,
    sleep_s: float | None = None,
    timeout: float = 3600,
) -> Launch:
    """A raw Ray Tune script (``benchmarks.workloads.raw_tune``) with default settings."""
    timings = cwd / "timings.json"
    cmd = [PYTHON, "-m", "benchmarks.workloads.raw_tune", "--trainable", trainable]
    cmd += ["--num-samples", str(num_samples), "--cpus", str(cpus)]
    cmd += ["--storage", str(cwd / "runs"), "--timings", str(timings)]
    if reuse_actors:
        cmd.append("--reuse-actors")
    if sleep_s is not None:
        cmd += ["--sleep-s", str(sleep_s)]
    launch, started = _run(variant, cmd, cwd, subprocess_env(), timeout)
    _apply_timings(launch, timings, started)
    launch.run_dir = str(cwd / "runs" / "raw")
    return launch


def interleave(
    name: str,
    reps: int,
    launchers: Mapping[str, Callable[[], Launch]],
    limits: Mapping[str, int] | None = None,
) -> dict[str, list[Launch]]:
    """Every variant's launcher once per repeat, in order, repeat by repeat.

    ``limits`` caps the repeats of some variants: they run in the first ones only.
    """
    runs: dict[str, list[Launch]] = {variant: [] for variant in launchers}
    for rep in range(reps):
        log(f"{name}: repeat {rep + 1}/{reps}")
        for variant, launch in launchers.items():
            if rep < (limits or {}).get(variant, reps):
                runs[variant].append(launch())
    return runs


def launch_counts(launches: Sequence[Launch], trials: int) -> tuple[list[Launch], dict[str, int]]:
    """The launches that exited 0, and the counts that head a variant's metrics."""
    ok = [x for x in launches if x.returncode == 0]
    return ok, {"trials": trials, "runs": len(launches), "failed_runs": len(launches) - len(ok)}


def bench_result(
    title: str,
    params: dict[str, Any],
    variants: dict[str, Any],
    targets: list[dict[str, Any]],
    runs: Mapping[str, Sequence[Launch]] | Sequence[Launch],
    figures: dict[str, Any] | None = None,
    **details: Any,
) -> dict[str, Any]:
    """A benchmark's result: the keys every one has, then ``details``, then its launches."""
    if isinstance(runs, Mapping):
        launches: Any = {k: [x.to_json() for x in v] for k, v in runs.items()}
    else:
        launches = [x.to_json() for x in runs]
    return {
        "title": title,
        "params": params,
        "variants": variants,
        "figures": {} if figures is None else figures,
        "targets": targets,
        **details,
        "runs": launches,
    }
