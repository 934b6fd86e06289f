"""7. GPU packing and sharing: the CNN-LSTM trading sweep at 1, 0.5, 0.25, 0.125 GPU, MPS or not.

The users' workload: the ``trading`` trainable with ``entry_model: "cnn_lstm"``
(mixed precision, data on the GPU, walk-forward folds and backtest), on GPU 0
only, at 1, 0.5, 0.25 and 0.125 GPU per trial with time-slicing, and at the
fractions below 1 with NVIDIA MPS (``resources.gpu_sharing: "mps"``) where the
host has it. The built-in ``torch_mlp`` on ``digits`` is kept (1 and 0.125 GPU;
MPS at 0.125) to compare with earlier figures.

Each variant is one ``sweep run`` of random configurations stopped by a time
budget (``stop.time_budget_s``), so the whole benchmark has a known length:
about 4 minutes on an H100 with ``--repeats 1`` (10 launches of a 16 s budget
and ~8 s of start and stop each). Per
variant: steady trials per hour (trial ends after the first, over the time
between the first and the last end), GPU utilisation from raysweep's own monitor
(``resource_usage.json``), peak GPU memory and that peak per trial sharing the
card, and the time from the fit's start to the first trial's start and end.
Targets (issue #37), ratios within one run on one GPU: the best packing of the
CNN-LSTM at least 5x the steady trials per hour of one trial per GPU, at least
85% GPU utilisation at that packing, MPS at least 1.3x time-slicing at 0.125.
Needs an NVIDIA GPU; elsewhere it writes a result that says it was skipped.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.harness.common import gpu_names, log, ratio, summarize, target
from benchmarks.harness.launch import Launch, launch_sweep, trial_events, workdir

NAME = "gpu"
TITLE = "GPU packing and sharing (CNN-LSTM trading, torch_mlp)"
FRACTIONS = (1.0, 0.5, 0.25, 0.125)
MLP_FRACTIONS = (1.0, 0.125)
PHASES = ("to_first_trial_start_s", "to_first_trial_end_s")
NUM_SAMPLES = 2000  # more than any budget finishes: the time budget ends each variant


@dataclass(frozen=True)
class Variant:
    """One sweep of the benchmark: a workload at a fraction, time-sliced or under MPS."""

    workload: str  # "cnn_lstm" or "torch_mlp"
    fraction: float
    sharing: str  # "time-slice" or "mps"

    @property
    def name(self) -> str:
        sharing = "MPS" if self.sharing == "mps" else "time-slice"
        return f"{self.workload} {self.fraction:g} GPU {sharing}"


def variants(with_mps: bool, quick: bool = False) -> list[Variant]:
    """Every variant, in the order they run (MPS ones only where the host has MPS).

    ``quick``: the CNN-LSTM only (torch_mlp's figures are the earlier benchmark's).
    """
    out = [Variant("cnn_lstm", f, "time-slice") for f in FRACTIONS]
    if with_mps:
        out += [Variant("cnn_lstm", f, "mps") for f in FRACTIONS if f < 1]
    if quick:
        return out
    out += [Variant("torch_mlp", f, "time-slice") for f in MLP_FRACTIONS]
    if with_mps:
        out.append(Variant("torch_mlp", 0.125, "mps"))
    return out


def cnn_lstm_config(variant: Variant, budget_s: float) -> dict[str, Any]:
    """The CNN-LSTM trading sweep: synthetic bars of two coins, two walk-forward folds."""
    return {
        "name": _run_name(variant),
        "trainable": "trading",
        "trainable_args": {
            "data": "synthetic",
            "synthetic": {"bars": 4000, "seed": 7, "symbols": 2},
            "n_folds": 2,
            "embargo": 12,
            "check_lookahead": False,  # checked by the test suite; here it is CPU time only
        },
        "metric": "composite",
        "mode": "max",
        "space": {
            "entry_model": "cnn_lstm",
            "cnn_lstm.seq_len": 32,
            "cnn_lstm.conv_channels": 32,
            "cnn_lstm.hidden_size": {"type": "choice", "values": [64, 128]},
            "cnn_lstm.learning_rate": {"type": "loguniform", "low": 3e-4, "high": 3e-3},
            "cnn_lstm.epochs": 4,
            "cnn_lstm.batch_size": 256,
            "entry_threshold": {"type": "uniform", "low": 0.4, "high": 0.6},
        },
        **_shared(variant, budget_s),
    }


def mlp_config(variant: Variant, budget_s: float) -> dict[str, Any]:
    """torch_mlp on digits (the earlier packing benchmark's workload)."""
    return {
        "name": _run_name(variant),
        "trainable": "torch_mlp",
        "trainable_args": {"dataset": "digits", "epochs": 10},
        "metric": "val_loss",
        "mode": "min",
        "space": {
            "lr": {"type": "loguniform", "low": 3e-4, "high": 3e-2},
            "hidden_size": {"type": "choice", "values": [256, 512, 1024]},
            "num_layers": {"type": "int", "low": 2, "high": 4},
            "batch_size": 64,
        },
        **_shared(variant, budget_s),
    }


def _shared(variant: Variant, budget_s: float) -> dict[str, Any]:
    resources: dict[str, Any] = {"cpus_per_trial": 1, "gpus_per_trial": variant.fraction}
    if variant.sharing == "mps":
        resources["gpu_sharing"] = "mps"
    return {
        "search": {"algorithm": "random", "num_samples": NUM_SAMPLES},
        "resources": resources,
        "stop": {"time_budget_s": budget_s},
        "seed": 7,
        "checkpoint": {"frequency": 0},
    }


def _run_name(variant: Variant) -> str:
    return f"{NAME}-{variant.workload}-{variant.fraction:g}-{variant.sharing}"


def steady_trials_per_hour(run_dir: Path) -> tuple[float | None, int]:
    """Trials ended after the first one, per hour of the span from the first to the last end.

    Errored trials count: they free their share of the GPU as a finished one does.
    """
    events = trial_events(run_dir / "trials.jsonl")
    ended, first, last = int(events["finished"]), events["first_end_t"], events["last_end_t"]
    if ended < 3 or first is None or last is None or last <= first:
        return None, ended
    return 3600.0 * (ended - 1) / (last - first), ended


def gpu_usage(run_dir: Path) -> tuple[float | None, float | None]:
    """(mean utilisation %, peak memory MiB) of the sweep's GPU from resource_usage.json."""
    path = run_dir / "resource_usage.json"
    if not path.is_file():
        return None, None
    gpus = json.loads(path.read_text(encoding="utf-8")).get("summary", {}).get("gpus") or []
    if not gpus:
        return None, None
    return gpus[0].get("util_pct_mean"), gpus[0].get("mem_used_mb_peak")


def measure(variant: Variant, budget_s: float) -> tuple[Launch, dict[str, float | None]]:
    """One launch of ``variant`` on GPU 0 and its figures."""
    make = cnn_lstm_config if variant.workload == "cnn_lstm" else mlp_config
    with workdir(NAME) as tmp:
        launch = launch_sweep(variant.name, make(variant, budget_s), tmp, args=["--gpus", "0"],
                              timeout=budget_s + 240)  # fmt: skip
        run_dir = Path(launch.run_dir or "")
        per_hour, ended = steady_trials_per_hour(run_dir)
        util, mem = gpu_usage(run_dir)
    sharing = max(1, math.floor(1 / variant.fraction + 1e-9))
    figures = {
        "steady_trials_per_hour": per_hour if launch.returncode == 0 else None,
        "trials_ended": float(ended),
        "gpu_util_mean": util,
        "gpu_mem_peak_mb": mem,
        "gpu_mem_peak_per_trial_mb": None if mem is None else mem / sharing,
        **{phase: launch.extra.get(phase) for phase in PHASES},
    }
    return launch, figures


def run(
    quick: bool = False, repeats: int | None = None, trials: int | None = None
) -> dict[str, Any]:
    """Every variant, interleaved repeat by repeat; skipped with a note without an NVIDIA GPU.

    ``trials`` is unused (each variant runs for a time budget): 12 s with ``--quick``
    (the CNN-LSTM variants only: about 2.5 minutes on an H100), 16 s with one
    repeat, 40 s otherwise.
    """
    from raysweep.gpu.mps import mps_status

    gpus = gpu_names()
    reps = repeats or (1 if quick else 3)
    budget = 12.0 if quick else 16.0 if reps == 1 else 40.0
    mps = mps_status([0]) if gpus else None
    params: dict[str, Any] = {
        "gpus": gpus,
        "time_budget_s": budget,
        "fractions": list(FRACTIONS),
        "mps": "available" if mps and mps.available else f"not available ({mps and mps.reason})",
    }
    if not gpus:
        return {
            "title": TITLE,
            "skipped": "no NVIDIA GPU on this machine (nvidia-smi found none); run "
            "`python -m benchmarks.gpu --repeats 1` on a GPU host to fill this in",
            "params": params,
            "variants": {},
            "targets": [],
        }
    plan = variants(bool(mps and mps.available), quick)
    runs: dict[str, list[tuple[Launch, dict[str, float | None]]]] = {v.name: [] for v in plan}
    for rep in range(reps):
        log(f"{NAME}: repeat {rep + 1}/{reps}")
        for variant in plan:
            runs[variant.name].append(measure(variant, budget))
    table = {
        name: {
            "runs": len(items),
            "failed_runs": sum(1 for launch, _ in items if launch.returncode),
            **{key: summarize(figures.get(key) for _, figures in items) for key in items[0][1]},
        }
        for name, items in runs.items()
    }
    figures, targets = _targets(table)
    return {
        "title": TITLE,
        "params": params,
        "variants": table,
        "figures": figures,
        "targets": targets,
        "runs": {k: [x.to_json() for x, _ in v] for k, v in runs.items()},
        "notes": [] if mps and mps.available else [f"MPS variants not run: {params['mps']}"],
    }


def _median(table: dict[str, Any], variant: str, key: str) -> float | None:
    value = table.get(variant, {}).get(key, {})
    return value.get("median") if isinstance(value, dict) else None


def _targets(table: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Ratios against one trial per GPU, the best packing, and MPS against time-slicing."""
    whole = _median(table, Variant("cnn_lstm", 1.0, "time-slice").name, "steady_trials_per_hour")
    figures: dict[str, Any] = {}
    best_name, best_rate = None, None
    for name in table:
        rate = _median(table, name, "steady_trials_per_hour")
        cnn = name.startswith("cnn_lstm")
        if cnn and rate is not None and (best_rate is None or rate > best_rate):
            best_name, best_rate = name, rate
        if name.startswith("cnn_lstm") and " 1 GPU" not in name:
            figures[f"{name} / cnn_lstm 1 GPU: steady trials per hour"] = summarize(
                [ratio(rate, whole)]
            )
    mps = _median(table, Variant("cnn_lstm", 0.125, "mps").name, "steady_trials_per_hour")
    sliced = _median(table, Variant("cnn_lstm", 0.125, "time-slice").name, "steady_trials_per_hour")
    util = _median(table, best_name, "gpu_util_mean") if best_name else None
    return figures, [
        target(
            f"steady trials per hour, best packing ({best_name}) / 1 GPU per trial",
            ratio(best_rate, whole),
            ">=",
            5,
            "x",
        ),
        target(f"GPU utilisation at the best packing ({best_name})", util, ">=", 85, "%"),
        target(
            "steady trials per hour at 0.125 GPU, MPS / time-slicing",
            ratio(mps, sliced),
            ">=",
            1.3,
            "x",
        ),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m benchmarks.gpu [--quick] [--repeats N]``."""
    from benchmarks.harness.cli import bench_main

    return bench_main(NAME, __doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    sys.exit(main())
