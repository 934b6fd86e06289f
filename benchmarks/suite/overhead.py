"""1. Scheduling overhead: no-op trials on 2 slots, ``sweep run`` vs raw Ray Tune.

Trials per second over ``Tuner.fit()`` and over the whole process, for
raysweep, raw Ray Tune with default settings and raw Ray Tune with
``reuse_actors=True``. Every run also yields the time to the first trial's body.
The full run adds ``sweep run --no-dashboard`` (raysweep's default before the
dashboard issue; raw Ray Tune's ``ray.init()`` starts the dashboard too).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from functools import partial
from typing import Any

from benchmarks.harness.common import ratio, summarize, target
from benchmarks.harness.launch import (
    Launch,
    bench_result,
    interleave,
    launch_counts,
    launch_raw,
    launch_sweep,
    workdir,
)

NAME = "overhead"
NO_DASHBOARD = "raysweep_no_dashboard"
TITLE = "Scheduling overhead"
TRAINABLE = "benchmarks.workloads.trainables:noop"
SLOTS = 2


def noop_config(name: str, trials: int, seed: int = 1) -> dict[str, Any]:
    """A sweep.json of ``trials`` no-op trials, one CPU each."""
    return {
        "name": name,
        "trainable": TRAINABLE,
        "metric": "loss",
        "mode": "min",
        "space": {"x": {"type": "uniform", "low": 0.0, "high": 1.0}},
        "search": {"algorithm": "random", "num_samples": trials},
        "resources": {"cpus_per_trial": 1},
        "seed": seed,
    }


def run_sweep_noop(trials: int, variant: str = "raysweep", **kwargs: Any) -> Launch:
    """One ``sweep run`` of ``trials`` no-op trials in a temp dir."""
    with workdir(NAME) as tmp:
        return launch_sweep(variant, noop_config(NAME, trials), tmp, **kwargs)


def run_raw_noop(trials: int, reuse_actors: bool) -> Launch:
    """One raw Ray Tune script of ``trials`` no-op trials."""
    variant = "raw_tuned" if reuse_actors else "raw_default"
    with workdir(NAME) as tmp:
        return launch_raw(variant, TRAINABLE, trials, tmp, cpus=SLOTS, reuse_actors=reuse_actors)


def launch_metrics(launches: Sequence[Launch], trials: int) -> dict[str, Any]:
    """Median/min/max of the per-run figures of one variant."""
    ok, counts = launch_counts(launches, trials)
    return {
        **counts,
        "fit_trials_per_s": summarize(ratio(trials, x.fit_s) for x in ok),
        "process_trials_per_s": summarize(ratio(trials, x.process_s) for x in ok),
        "steady_trials_per_s": summarize(x.extra.get("steady_trials_per_s") for x in ok),
        "fit_s": summarize(x.fit_s for x in ok),
        "process_s": summarize(x.process_s for x in ok),
        "ray_init_s": summarize(x.ray_init_s for x in ok),
        "startup_s": summarize(x.startup_s for x in ok),
        "teardown_s": summarize(x.teardown_s for x in ok),
        "first_trial_s": summarize(x.first_trial_s for x in ok),
        "driver_peak_rss_mb": summarize(x.driver_peak_rss_mb for x in ok),
        "fit_driver_cpu_ms_per_trial": summarize(
            None if x.fit_driver_cpu_s is None else 1000 * x.fit_driver_cpu_s / trials for x in ok
        ),
    }


def speedups(ours: dict[str, Any], base: dict[str, Any], key: str) -> dict[str, Any]:
    """Each of our repeats over the baseline's median, summarised."""
    base_median = base[key]["median"]
    return summarize(ratio(v, base_median) for v in ours[key]["values"])


def sizes(quick: bool, repeats: int | None, trials: int | None) -> tuple[int, int, int, int]:
    """(trials, trials for raw defaults, repeats, repeats for raw defaults)."""
    if quick:
        n = trials or 40
        return n, min(n, 8), repeats or 1, 1
    n = trials or 200
    return n, n, repeats or 3, 1


def comparisons(variants: dict[str, dict[str, Any]], ours: str) -> dict[str, Any]:
    """Speed-ups of variant ``ours`` over the raw Ray Tune variants."""
    out = {}
    for base in ("tuned", "default"):
        for kind in ("fit", "process"):
            out[f"{kind}_speedup_vs_{base}"] = speedups(
                variants[ours], variants[f"raw_{base}"], f"{kind}_trials_per_s"
            )
    return out


def overhead_targets(figures: dict[str, Any], label: str = "") -> list[dict[str, Any]]:
    """The issue's targets on fit and on whole-process trials/s."""
    out = []
    for kind in ("fit", "process"):
        for base, name, bound in (("tuned", "reuse_actors=True", 1.2), ("default", "defaults", 20)):
            value = figures[f"{kind}_speedup_vs_{base}"]["median"]
            out.append(
                target(f"{kind} trials/s vs raw Ray Tune, {name}{label}", value, ">=", bound, "x")
            )
    return out


def run(
    quick: bool = False, repeats: int | None = None, trials: int | None = None
) -> dict[str, Any]:
    """Run all variants, interleaved repeat by repeat, and compare them."""
    trials, default_trials, reps, default_reps = sizes(quick, repeats, trials)
    launchers = {
        "raysweep": partial(run_sweep_noop, trials),
        "raw_tuned": partial(run_raw_noop, trials, reuse_actors=True),
        "raw_default": partial(run_raw_noop, default_trials, reuse_actors=False),
    }
    if not quick:
        launchers[NO_DASHBOARD] = partial(
            run_sweep_noop, trials, NO_DASHBOARD, args=("--no-dashboard",)
        )
    runs = interleave(NAME, reps, launchers, limits={"raw_default": default_reps})
    variants = {
        name: launch_metrics(launches, default_trials if name == "raw_default" else trials)
        for name, launches in runs.items()
    }
    figures = comparisons(variants, "raysweep")
    targets = overhead_targets(figures)
    if NO_DASHBOARD in variants:
        plain = comparisons(variants, NO_DASHBOARD)
        figures.update({f"{k} ({NO_DASHBOARD})": v for k, v in plain.items()})
        targets += overhead_targets(plain, " (--no-dashboard)")
    params = {"trials": trials, "raw_default_trials": default_trials, "slots": SLOTS,
              "repeats": reps, "raw_default_repeats": default_reps}  # fmt: skip
    return bench_result(TITLE, params, variants, targets, runs, figures)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m benchmarks.run overhead [--quick] [--repeats N]``."""
    from benchmarks.harness.cli import bench_main

    return bench_main(NAME, __doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    sys.exit(main())
