"""Run the benchmarks: ``python -m benchmarks.run`` (``make bench``) or ``--quick``.

Full: every benchmark, several repeats, BENCHMARKS.md updated (about 50 min on
a 2-core VM). ``--quick`` (``make bench-quick``, CI smoke, about a minute on an
idle 2-core machine): the overhead benchmark at 40 trials (its runs also give
the time-to-first-trial figure), the scale benchmark at 500 trials, the demo
against plain Optuna and the search-quality benchmark (one sweep run of 4 trials;
Optuna as its peer where .venv-peers exists), one repeat; results go to ``*.quick.json`` and
BENCHMARKS.md is left alone.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from benchmarks import (
    early_stopping,
    first_trial,
    gpu,
    knobs,
    overhead,
    peer_optuna,
    scale,
    search_quality,
    slots,
)
from benchmarks.cli import parser, refresh_markdown, run_one
from benchmarks.common import log, meta, write_result
from benchmarks.launch import Launch

RunFunc = Callable[..., dict[str, Any]]
BENCHMARKS: dict[str, RunFunc] = {
    "overhead": overhead.run,
    "slots": slots.run,
    "first_trial": first_trial.run,
    "early_stopping": early_stopping.run,
    "search_quality": search_quality.run,
    "scale": scale.run,
    "gpu": gpu.run,
    "knobs": knobs.run,
    "peer_optuna": peer_optuna.run,
}
QUICK = ("overhead", "first_trial", "scale", "peer_optuna", "search_quality")


def _first_trial_from_overhead(result: dict[str, Any]) -> dict[str, Any]:
    """The time-to-first-trial result from the overhead benchmark's own runs."""
    runs = {name: [Launch(**item) for item in items] for name, items in result["runs"].items()}
    derived = first_trial.from_launches(runs)
    derived["params"] = {
        "from": "the overhead benchmark's runs",
        "trials": result["params"]["trials"],
        "raw_default_trials": result["params"]["raw_default_trials"],
    }
    return derived


def main(argv: Sequence[str] | None = None) -> int:
    """Run the chosen benchmarks, write their JSON and (full runs) BENCHMARKS.md."""
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--only", default="", help=f"comma-separated subset of {', '.join(BENCHMARKS)}")
    p.add_argument("--skip", default="", help="comma-separated benchmarks to leave out")
    args = p.parse_args(argv)
    only = [x for x in args.only.split(",") if x]
    skip = {x for x in args.skip.split(",") if x}
    unknown = [x for x in [*only, *skip] if x not in BENCHMARKS]
    if unknown:
        p.error(f"unknown benchmark(s) {unknown}; known: {', '.join(BENCHMARKS)}")
    names = [n for n in (only or (QUICK if args.quick else BENCHMARKS)) if n not in skip]
    update_md = not args.quick and not args.no_md
    started = time.monotonic()
    results: list[dict[str, Any]] = []
    for name in names:
        if name == "first_trial" and args.quick and "overhead" in names:
            over = next(r for r in results if r["benchmark"] == "overhead")
            stamp = meta(["python", "-m", "benchmarks.run", "--quick"])
            result = {"benchmark": name, "quick": True, **stamp,
                      **_first_trial_from_overhead(over)}  # fmt: skip
            write_result(args.results_dir, name, True, result)
        else:
            result = run_one(
                name,
                BENCHMARKS[name],
                quick=args.quick,
                repeats=args.repeats,
                results_dir=args.results_dir,
                trials=args.trials,
            )
        results.append(result)
        if update_md:
            refresh_markdown(args.markdown, args.results_dir, [result])
    from benchmarks.markdown import render_summary

    for result in results:
        print(render_summary(result))
    log(f"done in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
