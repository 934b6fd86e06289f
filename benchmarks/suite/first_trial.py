"""3. Time to first trial: process start to the first trial's body running.

The trainable writes a timestamp file on its first call in each worker; the
earliest one, minus the moment the harness started the process, is the figure.
Everything counts: interpreter start, ``import raysweep``, config validation,
``ray.init``, building the Tuner, starting the actor and raysweep's per-trial
wrapper. Compared with a raw Ray Tune script (defaults, which start Ray's dashboard)
running the same trainable; the full run adds ``sweep run --no-dashboard``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from functools import partial
from typing import Any

from benchmarks.harness.common import ratio, summarize, target
from benchmarks.harness.launch import Launch, interleave
from benchmarks.suite.overhead import NO_DASHBOARD, run_raw_noop, run_sweep_noop

NAME = "first_trial"
TITLE = "Time to first trial"
TRIALS = 4


def stages(launch: Launch) -> dict[str, float | None]:
    """Where the time to the first trial went (seconds, from process start)."""
    t = launch.extra.get("timings", {})
    first = launch.first_trial_s

    def span(a: str | None, b: str | None) -> float | None:
        start = 0.0 if a is None else t.get(a)
        end = first if b is None else t.get(b)
        return None if start is None or end is None else end - start

    return {
        "start_to_ray_init": span(None, "ray_start"),
        "ray_init": span("ray_start", "ray_end"),
        "ray_ready_to_fit": span("ray_end", "fit_start"),
        "fit_to_first_trial": span("fit_start", None),
    }


def _metrics(launches: Sequence[Launch]) -> dict[str, Any]:
    ok = [x for x in launches if x.returncode == 0]
    out: dict[str, Any] = {
        "runs": len(launches),
        "failed_runs": len(launches) - len(ok),
        "first_trial_s": summarize(x.first_trial_s for x in ok),
    }
    for key in ("start_to_ray_init", "ray_init", "ray_ready_to_fit", "fit_to_first_trial"):
        out[key] = summarize(stages(x)[key] for x in ok)
    return out


def run(
    quick: bool = False, repeats: int | None = None, trials: int | None = None
) -> dict[str, Any]:
    """raysweep and raw Ray Tune (defaults), interleaved."""
    reps = repeats or (1 if quick else 5)
    n = trials or TRIALS
    launchers = {
        "raysweep": partial(run_sweep_noop, n),
        "raw_default": partial(run_raw_noop, n, reuse_actors=False),
    }
    if not quick:
        launchers[NO_DASHBOARD] = partial(run_sweep_noop, n, NO_DASHBOARD, args=("--no-dashboard",))
    result = from_launches(interleave(NAME, reps, launchers))
    result["params"] = {"trials": trials or TRIALS, "repeats": reps}
    return result


def from_launches(runs: dict[str, list[Launch]]) -> dict[str, Any]:
    """The benchmark's result from runs of ``raysweep`` and ``raw_default`` (any size)."""
    names = [n for n in ("raysweep", NO_DASHBOARD, "raw_default") if runs.get(n)]
    variants = {name: _metrics(runs[name]) for name in names}
    raw_median = variants["raw_default"]["first_trial_s"]["median"]
    figures, targets = {}, []
    for name in names[:-1]:
        label = {"raysweep": "", NO_DASHBOARD: " (--no-dashboard)"}.get(name, f" ({name})")
        rel = summarize(ratio(v, raw_median) for v in variants[name]["first_trial_s"]["values"])
        figures[f"first_trial_vs_raw{label}"] = rel
        targets.append(
            target(f"time to first trial vs raw Ray Tune{label}", rel["median"], "<=", 1.0, "x")
        )
    return {
        "title": TITLE,
        "variants": variants,
        "figures": figures,
        "targets": targets,
        "runs": {k: [x.to_json() for x in v] for k, v in runs.items()},
    }


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m benchmarks.run first_trial [--quick] [--repeats N]``."""
    from benchmarks.harness.cli import bench_main

    return bench_main(NAME, __doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    sys.exit(main())
