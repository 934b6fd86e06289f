"""9. Against plain Optuna: the same GBM sweeps through ``sweep run`` and one Optuna process.

    python -m benchmarks.run peer_optuna [--quick] [--repeats N] [--workloads demo,random200]

For each workload of ``benchmarks.workloads.peer_workloads`` (the demo: 20 trials TPE +
ASHA; 200 trials random/FIFO; XGBoost multiclass on digits), plain Optuna in
one process (``benchmarks.workloads.peer_optuna_plain``: ``n_jobs`` = slots, the same
sampler and seed, successive halving for ASHA, the same split, rounds and report
cadence) and ``sweep run`` run interleaved, repeat by repeat. Whole-process
time for both; for raysweep the split: CLI start (Popen to ``ray.init``), Ray
start, fit start to the first trial body, the steady per-trial cost (second
half of the trial ends) and fit end to exit. ``sweep run --execution local`` (the
in-process executor, no Ray) runs too, split into process start to the first
trial start, steady per trial and last trial end to exit; the targets are its
ratios (what a one-machine user gets), and the Ray Tune path's ratios are kept
beside them as figures. Full runs add a fourth variant:
the Optuna study training through raysweep's own built-in trainable code
(``--raysweep-trainable``: same loader, split, parameters, report cadence and
checkpoint writes, no Ray), which prices raysweep's code apart from Ray's.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.harness.common import PYTHON, ratio, summarize, target
from benchmarks.harness.launch import (
    Launch,
    bench_result,
    interleave,
    launch_command,
    launch_sweep,
    workdir,
)
from benchmarks.workloads.peer_workloads import WORKLOADS, Workload

NAME = "peer_optuna"
TITLE = "Against plain Optuna"
# Whole-process ratio raysweep / plain Optuna that each workload must stay under.
TARGETS: dict[str, float] = {"demo": 2.5, "random200": 1.25, "xgb_digits": 1.05}
STEADY_TARGET = 1.2
QUICK_WORKLOADS = ("demo",)


def steady_per_trial_s(ends: Sequence[float]) -> float | None:
    """Seconds between trial ends over the second half of the sweep (None under 8 trials)."""
    ends = sorted(ends)
    half = len(ends) // 2
    if len(ends) < 8 or ends[-1] <= ends[half]:
        return None
    return (ends[-1] - ends[half]) / (len(ends) - 1 - half)


def run_plain(work: Workload, trials: int | None, raysweep_trainable: bool = False) -> Launch:
    """Plain Optuna on ``work`` in a subprocess, timed from outside.

    ``raysweep_trainable``: the objective trains through raysweep's built-in
    trainable code (in-process, no Ray) instead of the plain loop.
    """
    with workdir(NAME) as tmp:
        timings = tmp / "optuna.json"
        cmd = [PYTHON, "-m", "benchmarks.workloads.peer_optuna_plain", "--workload", work.name]
        cmd += ["--timings", str(timings)]
        if trials:
            cmd += ["--trials", str(trials)]
        if raysweep_trainable:
            cmd.append("--raysweep-trainable")
        variant = "inproc" if raysweep_trainable else "optuna"
        launch, started = launch_command(f"{variant}:{work.name}", cmd, tmp)
        if timings.is_file():
            t = json.loads(timings.read_text(encoding="utf-8"))
            launch.startup_s = t["optimize_start"] - started
            launch.fit_s = t["optimize_end"] - t["optimize_start"]
            launch.teardown_s = started + launch.process_s - t["optimize_end"]
            launch.extra.update(
                finished=len(t["trial_ends"]),
                steady_per_trial_s=steady_per_trial_s(t["trial_ends"]),
                best=t["best"],
            )
        return launch


def run_sweep(work: Workload, trials: int | None, local: bool = False) -> Launch:
    """``sweep run`` on ``work``, with the probe's clocks and the run's trial records.

    ``local``: with ``--execution local`` (the in-process executor, no Ray).
    """
    config = json.loads(json.dumps(work.config))
    if trials:
        config["search"]["num_samples"] = trials
    with workdir(NAME) as tmp:
        if local:
            launch = launch_sweep(f"local:{work.name}", config, tmp,
                                  args=("--execution", "local", "--no-dashboard"))  # fmt: skip
            add_local_split(launch, Path(launch.run_dir or tmp))
        else:
            launch = launch_sweep(f"raysweep:{work.name}", config, tmp)
            add_split(launch, Path(launch.run_dir or tmp))
        return launch


def add_local_split(launch: Launch, run_dir: Path) -> None:
    """Process start to the first trial start, steady per trial, last trial end to exit."""
    started = launch.extra.get("popen_t")
    first, last = launch.extra.get("first_start_t"), launch.extra.get("last_end_t")
    ends = [float(e["t"]) for e in _events(run_dir) if e.get("event") in ("ended", "errored")]
    launch.extra.update(steady_per_trial_s=steady_per_trial_s(ends), best=_best(run_dir))
    if started is not None and first is not None:
        launch.extra["start_to_first_trial_s"] = first - started
    if started is not None and last is not None:
        launch.extra["last_trial_to_exit_s"] = started + launch.process_s - last


def _events(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / "trials.jsonl"
    events = []
    for line in path.read_text(encoding="utf-8").splitlines() if path.is_file() else []:
        try:
            events.append(json.loads(line))
        except ValueError:
            continue
    return events


def add_split(launch: Launch, run_dir: Path) -> None:
    """CLI start, Ray start, fit to first trial body, steady per trial, fit end to exit."""
    t = launch.extra.get("timings", {})
    ends: list[float] = []
    bodies: list[float] = []
    for name, out in (("trials.jsonl", ends), ("trial_info.jsonl", bodies)):
        path = run_dir / name
        if not path.is_file():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            wanted = ("ended", "errored") if name == "trials.jsonl" else ("start",)
            if record.get("event") in wanted and "t" in record:
                out.append(float(record["t"]))
    started = launch.extra.get("popen_t")
    best = _best(run_dir)
    launch.extra.update(
        steady_per_trial_s=steady_per_trial_s(ends),
        cli_start_s=t.get("ray_start"),
        ray_start_s=launch.ray_init_s,
        best=best,
    )
    if bodies and "fit_start" in t and started is not None:
        launch.extra["fit_to_first_trial_body_s"] = min(bodies) - (started + t["fit_start"])


def _best(run_dir: Path) -> float | None:
    path = run_dir / "best_config.json"
    if not path.is_file():
        return None
    value = json.loads(path.read_text(encoding="utf-8")).get("value")
    return None if value is None else float(value)


def _plain_metrics(launches: list[Launch]) -> dict[str, Any]:
    ok = [x for x in launches if x.returncode == 0]
    return {
        "runs": len(launches),
        "failed_runs": len(launches) - len(ok),
        "process_s": summarize(x.process_s for x in ok),
        "startup_s": summarize(x.startup_s for x in ok),
        "teardown_s": summarize(x.teardown_s for x in ok),
        "steady_per_trial_s": summarize(x.extra.get("steady_per_trial_s") for x in ok),
        "best": summarize(x.extra.get("best") for x in ok),
    }


def workload_metrics(runs: dict[str, list[Launch]], work: Workload) -> dict[str, Any]:
    """Per-variant summaries and the ratios of one workload."""
    plain = [x for x in runs[f"optuna:{work.name}"] if x.returncode == 0]
    ours = [x for x in runs[f"raysweep:{work.name}"] if x.returncode == 0]
    local_runs = runs.get(f"local:{work.name}", [])
    local = [x for x in local_runs if x.returncode == 0]

    def extra(launches: list[Launch], key: str) -> dict[str, Any]:
        return summarize(x.extra.get(key) for x in launches)

    # Repeat by repeat (interleaved, so each pair ran under the same load).
    pairs = list(zip(ours, plain, strict=False))
    local_pairs = list(zip(local, plain, strict=False))
    return {
        "optuna": _plain_metrics(runs[f"optuna:{work.name}"]),
        "inproc": _plain_metrics(runs.get(f"inproc:{work.name}", [])),
        "raysweep": {
            "runs": len(runs[f"raysweep:{work.name}"]),
            "failed_runs": len(runs[f"raysweep:{work.name}"]) - len(ours),
            "process_s": summarize(x.process_s for x in ours),
            "cli_start_s": extra(ours, "cli_start_s"),
            "ray_init_s": summarize(x.ray_init_s for x in ours),
            "fit_to_first_trial_body_s": extra(ours, "fit_to_first_trial_body_s"),
            "steady_per_trial_s": extra(ours, "steady_per_trial_s"),
            "teardown_s": summarize(x.teardown_s for x in ours),
            "best": extra(ours, "best"),
        },
        "local": {
            "runs": len(local_runs),
            "failed_runs": len(local_runs) - len(local),
            "process_s": summarize(x.process_s for x in local),
            "start_to_first_trial_s": extra(local, "start_to_first_trial_s"),
            "steady_per_trial_s": extra(local, "steady_per_trial_s"),
            "last_trial_to_exit_s": extra(local, "last_trial_to_exit_s"),
            "best": extra(local, "best"),
        },
        "process_ratio": _ratios(local_pairs, None),
        "steady_ratio": _ratios(local_pairs, "steady_per_trial_s"),
        "process_ratio_ray": _ratios(pairs, None),
        "steady_ratio_ray": _ratios(pairs, "steady_per_trial_s"),
    }


def _ratios(pairs: list[tuple[Launch, Launch]], key: str | None) -> dict[str, Any]:
    """Summary of ``a / b`` over the pairs: whole-process time, or ``extra[key]``."""
    if key is None:
        return summarize(ratio(a.process_s, b.process_s) for a, b in pairs)
    return summarize(ratio(a.extra.get(key), b.extra.get(key)) for a, b in pairs)


def run(
    quick: bool = False,
    repeats: int | None = None,
    trials: int | None = None,
    workloads: Sequence[str] = (),
) -> dict[str, Any]:
    """Every workload both ways, interleaved repeat by repeat."""
    names = list(workloads) or list(QUICK_WORKLOADS if quick else WORKLOADS)
    reps = repeats or (1 if quick else 3)
    launchers = {}
    for name in names:
        work = WORKLOADS[name]
        launchers[f"optuna:{name}"] = lambda w=work: run_plain(w, trials)
        launchers[f"raysweep:{name}"] = lambda w=work: run_sweep(w, trials)
        launchers[f"local:{name}"] = lambda w=work: run_sweep(w, trials, local=True)
        if not quick:
            launchers[f"inproc:{name}"] = lambda w=work: run_plain(w, trials, True)
    runs = interleave(NAME, reps, launchers)
    variants: dict[str, Any] = {}
    figures: dict[str, Any] = {}
    targets = []
    for name in names:
        metrics = workload_metrics(runs, WORKLOADS[name])
        variants[f"{name}: plain Optuna"] = metrics["optuna"]
        variants[f"{name}: sweep run"] = metrics["raysweep"]
        variants[f"{name}: sweep run --execution local"] = metrics["local"]
        if metrics["inproc"]["runs"]:
            variants[f"{name}: raysweep's trainable in Optuna, no Ray"] = metrics["inproc"]
        figures[f"{name}_process_ratio"] = metrics["process_ratio"]
        figures[f"{name}_steady_ratio"] = metrics["steady_ratio"]
        figures[f"{name}_process_ratio_ray"] = metrics["process_ratio_ray"]
        figures[f"{name}_steady_ratio_ray"] = metrics["steady_ratio_ray"]
        what = WORKLOADS[name].what
        process = metrics["process_ratio"]["median"]
        steady = metrics["steady_ratio"]["median"]
        local = "(execution local)"
        targets.append(target(f"{what}: whole process {local}", process, "<=", TARGETS[name], "x"))
        targets.append(
            target(f"{what}: steady per-trial cost {local}", steady, "<=", STEADY_TARGET, "x")
        )
    params = {"workloads": names, "repeats": reps, "trials": trials,
              "what": {n: WORKLOADS[n].what for n in names}}  # fmt: skip
    return bench_result(TITLE, params, variants, targets, runs, figures)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m benchmarks.run peer_optuna [--quick] [--repeats N] [--workloads a,b]``."""
    from benchmarks.harness.cli import parser, run_and_report

    p = parser(__doc__.splitlines()[0], NAME)
    known = ", ".join(WORKLOADS)
    p.add_argument("--workloads", default="", help=f"comma-separated subset of {known}")
    args = p.parse_args(argv)
    chosen = [w for w in args.workloads.split(",") if w]
    unknown = [w for w in chosen if w not in WORKLOADS]
    if unknown:
        p.error(f"unknown workload(s) {unknown}; known: {', '.join(WORKLOADS)}")
    extra = ["--workloads", ",".join(chosen)] if chosen else []
    return run_and_report(NAME, lambda **kw: run(workloads=chosen, **kw), args, extra)


if __name__ == "__main__":
    sys.exit(main())
