"""Scheduler settings for benchmark 4: do other ASHA / Hyperband settings pay sooner?

    python -m benchmarks.run early_stopping_settings [--seeds 1,2,3] [--only NAME,NAME]

For each seed: random search (30 trials to the end, the baseline), then each
variant with 270 trials from the same seeded sampler, scored as
``benchmarks.suite.early_stopping`` scores them (iterations run, report by report,
until the first report within 0.5% of random's best, over random's total; the
older count by trial end alongside). One JSON line per run on stdout,
then a summary line per variant (median fraction; a seed that never got there
counts as infinitely expensive).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.harness.common import prog, ratio
from benchmarks.harness.launch import launch_sweep, workdir
from benchmarks.suite import early_stopping as es

MAX_T = 81
RANDOM_TRIALS = 30
ASHA = {"type": "asha", "max_t": MAX_T}
# Each variant: the scheduler, and the search when it is not the random sampler.
VARIANTS: dict[str, dict[str, Any]] = {
    "asha_grace1_rf3": {"scheduler": {**ASHA, "grace_period": 1, "reduction_factor": 3}},
    "asha_grace3_rf3": {"scheduler": {**ASHA, "grace_period": 3, "reduction_factor": 3}},
    "asha_grace9_rf3": {"scheduler": {**ASHA, "grace_period": 9, "reduction_factor": 3}},
    "asha_grace3_rf4": {"scheduler": {**ASHA, "grace_period": 3, "reduction_factor": 4}},
    "asha_grace1_rf4": {"scheduler": {**ASHA, "grace_period": 1, "reduction_factor": 4}},
    "asha_grace1_rf5": {"scheduler": {**ASHA, "grace_period": 1, "reduction_factor": 5}},
    "asha_grace1_rf9": {"scheduler": {**ASHA, "grace_period": 1, "reduction_factor": 9}},
    # asynchronous Hyperband: ASHA with 3 brackets (grace 1, 3 and 9)
    "asha_brackets3": {"scheduler": {**ASHA, "grace_period": 1, "brackets": 3}},
    # 3 brackets, not 5
    "hyperband_rf9": {"scheduler": {"type": "hyperband", "max_t": MAX_T, "reduction_factor": 9}},
    # Optuna's TPE proposes the configurations, ASHA stops them (the default settings)
    "optuna_asha_grace1_rf3": {
        "scheduler": {**ASHA, "grace_period": 1, "reduction_factor": 3},
        "search": {"algorithm": "optuna"},
    },
}


def run_variant(name: str, seed: int, threshold: float, base: float) -> dict[str, Any]:
    """One scheduler run of ``name`` scored against random search's best and compute."""
    config = es.sweep_config("asha", es.SCHEDULER_TRIALS * RANDOM_TRIALS, MAX_T, seed)
    config["scheduler"] = VARIANTS[name]["scheduler"]
    config["search"] = {**config["search"], **VARIANTS[name].get("search", {})}
    with workdir(es.NAME) as tmp:
        launch = launch_sweep(name, config, tmp)
        scored = es.analyse(*_read_run(launch, launch.returncode == 0), threshold)
    spent, spent_by_end = scored["compute_to_target"], scored["compute_to_target_trial_end"]
    return {
        "seed": seed,
        "variant": name,
        "returncode": launch.returncode,
        "best": scored["best"],
        "compute": scored["compute"],
        "compute_fraction": ratio(spent, base),
        "compute_fraction_trial_end": ratio(spent_by_end, base),
        "fit_s": launch.fit_s,
    }


def _read_run(launch: Any, ok: bool) -> tuple[list[dict[str, Any]], list[Any]]:
    """(trial records, reports) of a finished launch; empty when it failed."""
    if not ok:
        return [], []
    run_dir = Path(launch.run_dir or "")
    return es.read_trials(run_dir), es.read_reports(run_dir, es.METRIC)


def main(argv: Sequence[str] | None = None) -> int:
    """Run every variant for every seed; print JSON lines."""
    parser = argparse.ArgumentParser(
        prog=prog("early_stopping_settings"), description=__doc__.splitlines()[0]
    )
    parser.add_argument("--seeds", default=",".join(map(str, range(1, es.SEEDS + 1))))
    parser.add_argument("--only", default=",".join(VARIANTS), help="variants, comma-separated")
    args = parser.parse_args(argv)
    names = args.only.split(",")
    unknown = sorted(set(names) - set(VARIANTS))
    if unknown:
        parser.error(f"unknown variant(s) {unknown}; known: {sorted(VARIANTS)}")
    rows: list[dict[str, Any]] = []
    for seed in (int(s) for s in args.seeds.split(",")):
        with workdir(es.NAME) as tmp:
            launch = launch_sweep(
                "random", es.sweep_config("random", RANDOM_TRIALS, MAX_T, seed), tmp
            )
            baseline = es.analyse(*_read_run(launch, True), None)
        threshold = baseline["best"] * (1 + es.TOLERANCE)
        for name in names:
            rows.append(run_variant(name, seed, threshold, baseline["compute"]))
            print(json.dumps(rows[-1]), flush=True)
    for name in names:
        fractions = [r["compute_fraction"] for r in rows if r["variant"] == name]
        median = es.median_missing_high(fractions)
        reached = sum(f is not None for f in fractions)
        totals = [r["compute"] for r in rows if r["variant"] == name]
        summary = {
            "variant": name,
            "median_compute_fraction": median,
            "reached": reached,
            "runs": len(fractions),
            "median_total_compute": statistics.median(totals),
        }
        print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
