"""7. GPU packing and sharing: the CNN-LSTM trading sweep at 1, 0.5, 0.25, 0.125 GPU, MPS or not.

The users' workload: the ``trading`` trainable with ``entry_model: "cnn_lstm"``
(mixed precision, data on the GPU, walk-forward folds and backtest), on GPU 0
only, at 1, 0.5, 0.25 and 0.125 GPU per trial with time-slicing, and at the
fractions below 1 with NVIDIA MPS (``resources.gpu_sharing: "mps"``) where the
host has it. The built-in ``torch_mlp`` on ``digits`` is kept (1 and 0.125 GPU;
MPS at 0.125) to compare with earlier figures.

Each variant is one ``sweep run`` of random configurations on GPU 0 stopped by a
time budget (``stop.time_budget_s``), so the whole benchmark has a known length:
35 s per variant with ``--quick`` (the CNN-LSTM variants only: about 6 minutes on an
H100) or ``--repeats 1`` (all 10 variants: about 9 minutes), 90 s otherwise. Per
variant: steady trials per hour (the trials completed after the first ``slots``
completions, over the time from that one to the last, where ``slots`` is how many
trials share the card: by then every worker has had its cold start; trials the
budget stopped do not count), GPU utilisation from raysweep's own monitor
(``resource_usage.json``) over that same window, peak GPU memory and that peak per
trial sharing the card, and the time from the fit's start to the first trial's start
and end.
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
from benchmarks.harness.launch import Launch, launch_sweep, workdir

NAME = "gpu"
TITLE = "GPU packing and sharing (CNN-LSTM trading, torch_mlp)"
FRACTIONS = (1.0, 0.5, 0.25, 0.125)
MLP_FRACTIONS = (1.0, 0.125)
PHASES = ("to_first_trial_start_s", "to_first_trial_end_s")
NUM_SAMPLES = 2000  # more than any budget finishes: the time budget ends each variant
BUDGET_S = {"short": 35.0, "long": 90.0}  # --quick or one repeat / otherwise


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


def slots(fraction: float) -> int:
    """How many trials at ``fraction`` share one GPU."""
    return max(1, math.floor(1 / fraction + 1e-9))


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
            "cnn_lstm.epochs": 10,  # 400 steps a trial: the GPU's part, not Ray's, dominates
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


def completion_times(run_dir: Path) -> list[float]:
    """End times of the trials that ran to their end (completed or errored), in order.

    Errored trials count: they free their share of the GPU as a completed one does.
    Trials the time budget stopped do not: trials.jsonl records them as ended too,
    so their status is read from results.json.
    """
    path, results = run_dir / "trials.jsonl", run_dir / "results.json"
    if not path.is_file() or not results.is_file():
        return []
    trials = json.loads(results.read_text(encoding="utf-8")).get("trials", [])
    ran_out = {t["trial_id"] for t in trials if t.get("status") in ("completed", "errored")}
    times = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("event") in ("ended", "errored") and event.get("trial_id") in ran_out:
            times.append(float(event["t"]))
    return sorted(times)


def steady_trials_per_hour(
    run_dir: Path, slot_count: int
) -> tuple[float | None, int, tuple[float, float] | None]:
    """(trials per hour after the first ``slot_count`` completions, completions, that window).

    By the ``slot_count``-th completion every worker has had its cold start (torch's
    import, the CUDA context); the rate is over the time from it to the last
    completion. None with fewer than ``slot_count + 2`` completions.
    """
    times = completion_times(run_dir)
    if len(times) < slot_count + 2 or times[-1] <= times[slot_count - 1]:
        return None, len(times), None
    window = (times[slot_count - 1], times[-1])
    return 3600.0 * (len(times) - slot_count) / (window[1] - window[0]), len(times), window


def gpu_usage(
    run_dir: Path, window: tuple[float, float] | None
) -> tuple[float | None, float | None]:
    """(mean utilisation % in ``window``, peak memory MiB) of GPU 0 from resource_usage.json.

    The mean is over the monitor's samples taken in the window (weighted by the raw
    samples each one merges); None without a window or a sample in it.
    """
    path = run_dir / "resource_usage.json"
    if not path.is_file():
        return None, None
    data = json.loads(path.read_text(encoding="utf-8"))
    gpus = data.get("summary", {}).get("gpus") or []
    peak = gpus[0].get("mem_used_mb_peak") if gpus else None
    if window is None:
        return None, peak
    total = weight = 0.0
    for sample in data.get("samples", []):
        readings = sample.get("gpus") or []
        util = readings[0].get("util_pct") if readings else None
        if util is not None and window[0] <= float(sample.get("t", -1)) <= window[1]:
            n = float(sample.get("n", 1))
            total, weight = total + util * n, weight + n
    return (total / weight if weight else None), peak


def measure(variant: Variant, budget_s: float) -> tuple[Launch, dict[str, float | None]]:
    """One launch of ``variant`` on GPU 0 and its figures."""
    make = cnn_lstm_config if variant.workload == "cnn_lstm" else mlp_config
    sharing = slots(variant.fraction)
    with workdir(NAME) as tmp:
        launch = launch_sweep(variant.name, make(variant, budget_s), tmp,
                              args=["--gpus", "0"], timeout=budget_s + 240)  # fmt: skip
        run_dir = Path(launch.run_dir or "")
        per_hour, completed, window = steady_trials_per_hour(run_dir, sharing)
        util, mem = gpu_usage(run_dir, window)
    figures = {
        "steady_trials_per_hour": per_hour if launch.returncode == 0 else None,
        "trials_completed": float(completed),
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

    ``trials`` is unused (each variant runs for a time budget): 35 s with ``--quick``
    (the CNN-LSTM variants only: about 6 minutes on an H100) or one repeat (about 9
    minutes), 90 s otherwise.
    """
    from raysweep.gpu.mps import mps_status

    gpus = gpu_names()
    reps = repeats or (1 if quick else 3)
    budget = BUDGET_S["short"] if quick or reps == 1 else BUDGET_S["long"]
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
            "`python -m benchmarks.run gpu --repeats 1` on a GPU host to fill this in",
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
        "notes": _notes(plan, table, budget, None if mps and mps.available else params["mps"]),
    }


def _notes(
    plan: list[Variant], table: dict[str, Any], budget: float, no_mps: str | None
) -> list[str]:
    """What the figures cannot say: variants without a steady rate, MPS not run."""
    notes = [f"MPS variants not run: {no_mps}"] if no_mps else []
    for variant in plan:
        if _median(table, variant.name, "steady_trials_per_hour") is None:
            done = _median(table, variant.name, "trials_completed")
            notes.append(
                f"{variant.name}: no steady rate ({int(done or 0)} trials completed, "
                f"{slots(variant.fraction) + 2} needed, in a {budget:g} s budget)"
            )
    return notes


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
    """``python -m benchmarks.run gpu [--quick] [--repeats N]``."""
    from benchmarks.harness.cli import bench_main

    return bench_main(NAME, __doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    sys.exit(main())
