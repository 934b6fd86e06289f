"""5. Search quality: Optuna (TPE) and HyperOpt vs random search at equal trial budgets.

A cheap deterministic function (Branin, ``benchmarks.trainables:branin``, one
report per trial), N trials per run, several seeds. For each seed, random
search's best-of-N is the bar; the figure is how many trials (in suggestion
order) each algorithm needed to reach it (N + 1 when it never did), median
over seeds. Each algorithm runs with raysweep's default options.

15 seeds: the count is heavy-tailed (a seed where random search is lucky costs
N + 1), so a median of 5 seeds moves with a single seed (Optuna: 24 trials over
seeds 1-5, 17 over seeds 1-15).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.common import bench_result, log, summarize, target
from benchmarks.launch import Launch, launch_sweep, workdir

NAME = "search_quality"
TITLE = "Search quality"
ALGORITHMS = ("random", "optuna", "hyperopt")
BRANIN_MIN = 0.397887
SEEDS = 15


def sweep_config(algorithm: str, trials: int, seed: int) -> dict[str, Any]:
    """Branin over x1 in [-5, 10], x2 in [0, 15]."""
    return {
        "name": f"{NAME}-{algorithm}",
        "trainable": "benchmarks.trainables:branin",
        "metric": "value",
        "mode": "min",
        "space": {
            "x1": {"type": "uniform", "low": -5.0, "high": 10.0},
            "x2": {"type": "uniform", "low": 0.0, "high": 15.0},
        },
        "search": {"algorithm": algorithm, "num_samples": trials, "max_concurrent": 2},
        "resources": {"cpus_per_trial": 1},
        "seed": seed,
    }


def values_in_order(run_dir: Path) -> list[float]:
    """Each trial's value, in suggestion (index) order."""
    trials = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))["trials"]
    trials = sorted(trials, key=lambda t: t["index"])
    return [t["best_metric"] for t in trials if t.get("best_metric") is not None]


def trials_to_reach(values: list[float], bar: float, budget: int) -> int:
    """1-based count of trials until a value <= bar (budget + 1 when never)."""
    for i, value in enumerate(values, start=1):
        if value <= bar:
            return i
    return budget + 1


def run(
    quick: bool = False, repeats: int | None = None, trials: int | None = None
) -> dict[str, Any]:
    """Every algorithm on every seed; trials each needs to reach random's best-of-N."""
    trials = trials or (12 if quick else 40)
    seeds = list(range(1, 1 + (repeats or (1 if quick else SEEDS))))
    per_seed: list[dict[str, Any]] = []
    launches: list[Launch] = []
    for seed in seeds:
        log(f"{NAME}: seed {seed}")
        values: dict[str, list[float]] = {}
        for algorithm in ALGORITHMS:
            with workdir(NAME) as tmp:
                launch = launch_sweep(algorithm, sweep_config(algorithm, trials, seed), tmp)
                launches.append(launch)
                ok = launch.returncode == 0
                values[algorithm] = values_in_order(Path(launch.run_dir or "")) if ok else []
        bar = min(values["random"]) if values["random"] else float("nan")
        per_seed.append(
            {
                "seed": seed,
                "random_best": bar,
                **{
                    a: {
                        "best": min(v) if v else None,
                        "trials_to_target": trials_to_reach(v, bar, trials) if v else None,
                    }
                    for a, v in values.items()
                },
            }
        )
    variants: dict[str, dict[str, Any]] = {
        a: {
            "runs": len(per_seed),
            "best": summarize(r[a]["best"] for r in per_seed),
            "trials_to_target": summarize(r[a]["trials_to_target"] for r in per_seed),
            "reached_fraction": summarize(
                [
                    sum((r[a]["trials_to_target"] or trials + 1) <= trials for r in per_seed)
                    / len(per_seed)
                ]
            ),
        }
        for a in ALGORITHMS
    }
    targets = [
        target(f"{a}: trials to reach random's best-of-{trials}",
               variants[a]["trials_to_target"]["median"], "<", trials, " trials")
        for a in ("optuna", "hyperopt")
    ]  # fmt: skip
    params = {"function": "branin (min 0.397887)", "trials": trials, "seeds": seeds,
              "max_concurrent": 2}  # fmt: skip
    return bench_result(TITLE, params, variants, targets, launches, per_seed=per_seed)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m benchmarks.search_quality [--quick] [--repeats SEEDS]``."""
    from benchmarks.cli import bench_main

    return bench_main(NAME, __doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    sys.exit(main())
