"""Run the benchmarks: the suite (``make bench``, ``--quick``) or one benchmark by name.

Full: every suite benchmark, several repeats, BENCHMARKS.md updated (about 50 min
on a 2-core VM). ``--quick`` (``make bench-quick``, CI smoke, about a minute on an
idle 2-core machine): the overhead benchmark at 40 trials (its runs also give
the time-to-first-trial figure), the scale benchmark at 500 trials, the demo
against plain Optuna and the search-quality benchmark (one sweep run of 4 trials;
Optuna as its peer where .venv-peers exists), one repeat; results go to ``*.quick.json`` and
BENCHMARKS.md is left alone. ``--list`` prints every registered benchmark,
standalone scripts included (benchmarks/registry.py).

``python -m benchmarks.run NAME [flags]`` runs one registered benchmark, suite or
standalone, alone: everything after NAME goes to that benchmark's own command line
(``python -m benchmarks.run NAME --help`` lists its flags).
"""

from __future__ import annotations

import argparse
import sys
import textwrap
import time
from collections.abc import Sequence
from typing import Any

from benchmarks.harness.cli import parser, refresh_markdown, run_one
from benchmarks.harness.common import log, meta, write_result
from benchmarks.harness.launch import Launch
from benchmarks.registry import BENCHMARKS, BY_NAME, QUICK_SUITE, SUITE, render_table
from benchmarks.suite import first_trial

STANDALONE = tuple(b.name for b in BENCHMARKS if not b.suite)
USAGE = """%(prog)s [--quick] [--only NAMES] [--skip NAMES] [--repeats N] [--trials N]
                                [--results-dir DIR] [--no-md]
       %(prog)s --list
       %(prog)s NAME [NAME's own flags]"""
EPILOG = f"""Without NAME it runs the suite (--only / --skip: a part of it). With NAME it runs
that one benchmark, suite or standalone, alone: everything after NAME goes to the
benchmark's own flags (%(prog)s NAME --help lists them).

suite:
{textwrap.fill(", ".join(SUITE), 88, initial_indent="  ", subsequent_indent="  ")}
standalone:
{textwrap.fill(", ".join(STANDALONE), 88, initial_indent="  ", subsequent_indent="  ")}"""


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
    """Run the suite (or a part), write its JSON and (full runs) BENCHMARKS.md; or one by NAME."""
    argv = sys.argv[1:] if argv is None else list(argv)
    p = parser(__doc__.splitlines()[0], usage=USAGE, epilog=EPILOG,
               formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    if argv and not argv[0].startswith("-"):  # NAME [its flags]
        name, rest = argv[0], argv[1:]
        if name not in BY_NAME:
            p.error(f"unknown benchmark {name!r}; known: {', '.join(BY_NAME)}")
        return BY_NAME[name].main_function()(rest)
    p.add_argument("--only", default="", metavar="NAMES", help="comma-separated suite benchmarks")
    p.add_argument("--skip", default="", metavar="NAMES", help="comma-separated ones to leave out")
    p.add_argument(
        "--list",
        action="store_true",
        help="print every registered benchmark (suite and standalone) and exit",
    )
    args = p.parse_args(argv)
    if args.list:
        print(render_table())
        return 0
    only = [x for x in args.only.split(",") if x]
    skip = {x for x in args.skip.split(",") if x}
    unknown = [x for x in [*only, *skip] if x not in SUITE]
    if unknown:
        standalone = [x for x in unknown if x in BY_NAME]
        hint = f" ({', '.join(standalone)}: standalone, run alone: {p.prog} NAME [flags])"
        p.error(
            f"unknown benchmark(s) {unknown}; known: {', '.join(SUITE)}"
            + (hint if standalone else "")
        )
    names = [n for n in (only or (QUICK_SUITE if args.quick else SUITE)) if n not in skip]
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
                BY_NAME[name].run_function(),
                quick=args.quick,
                repeats=args.repeats,
                results_dir=args.results_dir,
                trials=args.trials,
            )
        results.append(result)
        if update_md:
            refresh_markdown(args.markdown, args.results_dir, [result])
    from benchmarks.harness.markdown import render_summary

    for result in results:
        print(render_summary(result))
    log(f"done in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
