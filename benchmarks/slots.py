"""2. Slot efficiency: one-second trials on 2 CPUs, ideal wall time over actual.

``examples.quadratic:sleeper`` (sleeps 1 s, reports once), 40 trials on 2 CPUs:
ideal 20 s. Efficiency = ideal / ``Tuner.fit()`` wall time (and / whole-process
time). Issue #2's figure: fit time over the ideal (target within 10%).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from benchmarks.common import log, ratio, summarize, target
from benchmarks.launch import (
    PROPOSED,
    Launch,
    launch_raw,
    launch_sweep,
    proposed_enabled,
    proposed_kwargs,
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


def _metrics(launches: Sequence[Launch], trials: int) -> dict[str, Any]:
    ideal = trials * SLEEP_S / SLOTS
    ok = [x for x in launches if x.returncode == 0]
    return {
        "trials": trials,
        "runs": len(launches),
        "failed_runs": len(launches) - len(ok),
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
    names = ["raysweep", *([PROPOSED] if proposed_enabled() else []), "raw_tuned", "raw_default"]
    runs: dict[str, list[Launch]] = {name: [] for name in names}
    for rep in range(reps):
        log(f"{NAME}: repeat {rep + 1}/{reps}")
        with workdir(NAME) as tmp:
            runs["raysweep"].append(launch_sweep("raysweep", sleeper_config(trials), tmp))
        if PROPOSED in runs:
            with workdir(NAME) as tmp:
                runs[PROPOSED].append(
                    launch_sweep(PROPOSED, sleeper_config(trials), tmp, **proposed_kwargs(trials))
                )
        for variant, reuse in (("raw_tuned", True), ("raw_default", False)):
            if variant == "raw_default" and rep >= default_reps:
                continue
            with workdir(NAME) as tmp:
                runs[variant].append(
                    launch_raw(variant, TRAINABLE, trials, tmp, cpus=SLOTS,
                               reuse_actors=reuse, sleep_s=SLEEP_S)
                )  # fmt: skip
    variants = {name: _metrics(launches, trials) for name, launches in runs.items()}
    targets = []
    for name in ("raysweep", PROPOSED):
        if name not in variants:
            continue
        ours, label = variants[name], "" if name == "raysweep" else f" ({name})"
        targets += [
            target(f"fit efficiency (ideal / fit wall time){label}",
                   ours["fit_efficiency"]["median"], ">=", 0.95),
            target(f"issue #2: fit wall time / ideal{label}",
                   ours["fit_over_ideal"]["median"], "<=", 1.10),
        ]  # fmt: skip
    return {
        "title": TITLE,
        "params": {"trials": trials, "sleep_s": SLEEP_S, "slots": SLOTS,
                   "ideal_s": trials * SLEEP_S / SLOTS, "repeats": reps,
                   "raw_default_repeats": default_reps},
        "variants": variants,
        "figures": {},
        "targets": targets,
        "runs": {k: [x.to_json() for x in v] for k, v in runs.items()},
    }  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m benchmarks.slots [--quick] [--repeats N]``."""
    from benchmarks.cli import bench_main

    return bench_main(NAME, __doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    sys.exit(main())
