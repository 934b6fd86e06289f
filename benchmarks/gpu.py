"""7. GPU packing: fractional trials (0.125 and 0.25 GPU each) vs one trial per GPU.

The built-in ``torch_mlp`` on ``digits``, the same seeded trials with
``gpus_per_trial`` 0.125, 0.25 (four trials share a GPU) and 1.0. Reports wall
time, trials per second over the whole fit and in the steady state (the second
half of the trial ends, what a sweep of hours runs at), where the fixed part of
the fit goes (to the first trial's start and end, after the last trial) and the
GPU utilisation raysweep's own monitor sampled (``resource_usage.json``).
Target (issue #5): at least 3x the small-model trials per hour with 0.25 GPU per
trial, taken on the steady throughput; the whole-fit ratio is reported beside it.
Needs an NVIDIA GPU; elsewhere it writes a result that says it was skipped.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.common import gpu_names, log, ratio, summarize, target
from benchmarks.launch import Launch, launch_sweep, workdir

NAME = "gpu"
TITLE = "GPU packing"
FRACTIONS = (0.125, 0.25, 1.0)
PHASES = ("to_first_trial_start_s", "to_first_trial_end_s", "after_last_trial_s")


def sweep_config(gpus_per_trial: float, trials: int, epochs: int) -> dict[str, Any]:
    """torch_mlp on digits with ``gpus_per_trial``; enough CPUs for four trials per GPU."""
    return {
        "name": f"{NAME}-{gpus_per_trial:g}",
        "trainable": "torch_mlp",
        "trainable_args": {"dataset": "digits", "epochs": epochs},
        "metric": "val_loss",
        "mode": "min",
        "space": {
            "lr": {"type": "loguniform", "low": 3e-4, "high": 3e-2},
            "hidden_size": {"type": "choice", "values": [256, 512, 1024]},
            "num_layers": {"type": "int", "low": 2, "high": 4},
            "batch_size": 64,
        },
        "search": {"algorithm": "random", "num_samples": trials},
        "resources": {"cpus_per_trial": 1, "gpus_per_trial": gpus_per_trial},
        "seed": 7,
        "checkpoint": {"frequency": 0},
    }


def gpu_utilisation(run_dir: Path) -> float | None:
    """Mean utilisation over the sweep's GPUs from resource_usage.json's summary."""
    path = run_dir / "resource_usage.json"
    if not path.is_file():
        return None
    gpus = json.loads(path.read_text(encoding="utf-8")).get("summary", {}).get("gpus") or []
    means = [g["util_pct_mean"] for g in gpus if g.get("util_pct_mean") is not None]
    return sum(means) / len(means) if means else None


def run(
    quick: bool = False, repeats: int | None = None, trials: int | None = None
) -> dict[str, Any]:
    """Every packing, interleaved repeat by repeat; skipped with a note without an NVIDIA GPU."""
    gpus = gpu_names()
    trials, epochs = (trials or (8 if quick else 96)), (3 if quick else 10)
    params = {"trials": trials, "epochs": epochs, "gpus": gpus, "fractions": list(FRACTIONS)}
    if not gpus:
        return {
            "title": TITLE,
            "skipped": "no NVIDIA GPU on this machine (nvidia-smi found none); run "
            "`python -m benchmarks.gpu` on a GPU host to fill this in",
            "params": params,
            "variants": {},
            "targets": [],
        }
    reps = repeats or (1 if quick else 3)
    runs: dict[str, list[tuple[Launch, float | None]]] = {f"{f:g} GPU": [] for f in FRACTIONS}
    for rep in range(reps):
        log(f"{NAME}: repeat {rep + 1}/{reps}")
        for fraction in FRACTIONS:
            with workdir(NAME) as tmp:
                launch = launch_sweep(
                    f"{fraction:g} GPU",
                    sweep_config(fraction, trials, epochs),
                    tmp,
                    args=["--gpus", "all"],
                )
                ok = launch.returncode == 0
                util = gpu_utilisation(Path(launch.run_dir or "")) if ok else None
            runs[f"{fraction:g} GPU"].append((launch, util))
    variants: dict[str, dict[str, Any]] = {
        name: {
            "runs": len(items),
            "fit_s": summarize(x.fit_s for x, _ in items if not x.returncode),
            "fit_trials_per_s": summarize(
                ratio(trials, x.fit_s) for x, _ in items if not x.returncode
            ),
            "steady_trials_per_s": summarize(
                x.extra.get("steady_trials_per_s") for x, _ in items if not x.returncode
            ),
            "gpu_util_mean": summarize(u for _, u in items),
            **{
                phase: summarize(x.extra.get(phase) for x, _ in items if not x.returncode)
                for phase in PHASES
            },
        }
        for name, items in runs.items()
    }
    whole = variants["1 GPU"]
    figures = {}
    for name in variants:
        if name != "1 GPU":
            for key in ("fit_trials_per_s", "steady_trials_per_s"):
                figures[f"{name} / 1 GPU: {key}"] = summarize(
                    [ratio(variants[name][key]["median"], whole[key]["median"])]
                )
    steady = figures["0.25 GPU / 1 GPU: steady_trials_per_s"]["median"]
    goal = "steady trials per hour, 0.25 GPU per trial / 1 GPU per trial"
    return {
        "title": TITLE,
        "params": params,
        "variants": variants,
        "figures": figures,
        "targets": [target(goal, steady, ">=", 3, "x")],
        "runs": {k: [x.to_json() for x, _ in v] for k, v in runs.items()},
    }


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m benchmarks.gpu [--quick] [--repeats N]``."""
    from benchmarks.cli import bench_main

    return bench_main(NAME, __doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    sys.exit(main())
