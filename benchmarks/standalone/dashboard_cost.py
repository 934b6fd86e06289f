"""What the Ray dashboard costs a sweep at start-up: ``python -m benchmarks.run dashboard_cost``.

``sweep run`` starts the dashboard by default (bound to 127.0.0.1); raw Ray Tune's
``ray.init()`` starts it too. Interleaved repeat by repeat: ``sweep run`` (default,
dashboard on), ``sweep run --no-dashboard``, and the raw Ray Tune script with its
defaults, each on the same no-op sweep. Figures: time to the first trial's body
and whole-process time, medians over the repeats.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Sequence
from functools import partial

from benchmarks.harness.common import prog
from benchmarks.harness.launch import Launch, interleave, launch_sweep, workdir
from benchmarks.suite.overhead import NAME as OVERHEAD
from benchmarks.suite.overhead import noop_config, run_raw_noop

TRIALS = 8


def _sweep(trials: int, args: Sequence[str]) -> Launch:
    variant = "raysweep_no_dashboard" if args else "raysweep"
    with workdir(OVERHEAD) as tmp:
        return launch_sweep(variant, noop_config(OVERHEAD, trials), tmp, args=args)


def _median(values: list[float | None]) -> str:
    clean = [v for v in values if v is not None]
    if not clean:
        return "-"
    return f"{statistics.median(clean):.2f} s ({min(clean):.2f}-{max(clean):.2f})"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=prog("dashboard_cost"), description=__doc__.splitlines()[0]
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--trials", type=int, default=TRIALS)
    args = parser.parse_args(argv)
    launchers = {
        "raysweep (dashboard on, default)": partial(_sweep, args.trials, ()),
        "raysweep --no-dashboard": partial(_sweep, args.trials, ("--no-dashboard",)),
        "raw Ray Tune, defaults (dashboard on)": partial(
            run_raw_noop, args.trials, reuse_actors=False
        ),
    }
    runs = interleave("dashboard_cost", args.repeats, launchers)
    print(f"{args.trials} no-op trials, {args.repeats} repeats, interleaved")
    print(f"{'variant':<40} {'first trial':<22} {'process':<22} failed")
    for name, launches in runs.items():
        failed = sum(1 for x in launches if x.returncode != 0)
        print(
            f"{name:<40} {_median([x.first_trial_s for x in launches]):<22} "
            f"{_median([x.process_s for x in launches]):<22} {failed}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
