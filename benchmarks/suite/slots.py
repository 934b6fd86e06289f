"""2. Slot efficiency: one-second trials on 2 CPUs, ideal wall time over actual.

``examples.quadratic:sleeper`` (sleeps 1 s, reports once), 40 trials on 2 CPUs:
ideal 20 s. Efficiency = ideal / ``Tuner.fit()`` wall time (and / whole-process
time). Issue #2's figure: fit time over the ideal (target within 10%).
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

NAME = "slots"
TITLE = "Slot efficiency"
TRAINABLE = "examples.quadratic:sleeper"
SLOTS = 2
SLEEP_S = 1.0


def sleeper_config(trials: int) -> dict[str, Any]:
    """A sweep.json of ``trials`` one-second trials, one CPU each."""
    return {
        "name": NAME,
        "trainable": TRAINABLE,
        "metric": "loss",
        "mode": "min",
        "space": {"x": {"type": "uniform", "low": 0.0, "high": 1.0}, "sleep_s": SLEEP_S},
        "search": {"algorithm": "random", "num_samples": trials},
        "resources": {"cpus_per_trial": 1},
        "seed": 1,
    }


def run_sleepers(variant: str, trials: int) -> Launch:
    """One run of ``trials`` one-second trials in a temp dir: ``sweep run`` or raw Ray Tune."""
    with workdir(NAME) as tmp:
        if variant == "raysweep":
            return launch_sweep(variant, sleeper_config(trials), tmp)
        return launch_raw(variant, TRAINABLE, trials, tmp, cpus=SLOTS,
                          reuse_actors=variant == "raw_tuned", sleep_s=SLEEP_S)  # fmt: skip


def _metrics(launches: Sequence[Launch], trials: int) -> dict[str, Any]:
    ideal = trials * SLEEP_S / SLOTS
    ok, counts = launch_counts(launches, trials)
    return {
        **counts,
        "fit_efficiency": summarize(ratio(ideal, x.fit_s) for x in ok),
        "process_efficiency": summarize(ratio(ideal, x.process_s) for x in ok),
        "fit_over_ideal": summarize(ratio(x.fit_s, ideal) for x in ok),
        "fit_s": summarize(x.fit_s for x in ok),
        "process_s": summarize(x.process_s for x in ok),
        "first_trial_s": summarize(x.first_trial_s for x in ok),
    }


def run(
    quick: bool = False, repeats: int | None = None, trials: int | None = None
) -> dict[str, Any]:
    """raysweep, raw Ray Tune tuned and default, interleaved."""
    trials = trials or (8 if quick else 40)
    reps = repeats or (1 if quick else 3)
    default_reps = 1
    names = ("raysweep", "raw_tuned", "raw_default")
    launchers = {name: partial(run_sleepers, name, trials) for name in names}
    runs = interleave(NAME, reps, launchers, limits={"raw_default": default_reps})
    variants = {name: _metrics(launches, trials) for name, launches in runs.items()}
    ours = variants["raysweep"]
    targets = [
        target("fit efficiency (ideal / fit wall time)",
               ours["fit_efficiency"]["median"], ">=", 0.95),
        target("issue #2: fit wall time / ideal", ours["fit_over_ideal"]["median"], "<=", 1.10),
    ]  # fmt: skip
    params = {"trials": trials, "sleep_s": SLEEP_S, "slots": SLOTS,
              "ideal_s": trials * SLEEP_S / SLOTS, "repeats": reps,
              "raw_default_repeats": default_reps}  # fmt: skip
    return bench_result(TITLE, params, variants, targets, runs)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m benchmarks.run slots [--quick] [--repeats N]``."""
    from benchmarks.harness.cli import bench_main

    return bench_main(NAME, __doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    sys.exit(main())
