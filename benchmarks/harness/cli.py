"""The command line every suite benchmark shares (``python -m benchmarks.run NAME [flags]``)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.harness.common import (
    BENCHMARKS_MD,
    RESULTS_DIR,
    bench_command,
    log,
    meta,
    prog,
    write_result,
)

RunFunc = Callable[..., dict[str, Any]]


def parser(description: str, name: str | None = None, **kwargs: Any) -> argparse.ArgumentParser:
    """Flags common to every suite benchmark (``name``) and to the runner (no ``name``).

    ``kwargs`` go to :class:`argparse.ArgumentParser` (the runner's usage and epilog).
    """
    p = argparse.ArgumentParser(prog=prog(name), description=description, **kwargs)
    p.add_argument("--quick", action="store_true", help="CI-sized: fewer trials, one repeat")
    p.add_argument(
        "--repeats", type=int, default=None, metavar="N", help="override the number of repeats"
    )
    p.add_argument(
        "--trials", type=int, default=None, metavar="N", help="override the number of trials"
    )
    p.add_argument(
        "--results-dir", type=Path, default=RESULTS_DIR, metavar="DIR", help="where JSON goes"
    )
    p.add_argument(
        "--no-md",
        action="store_true",
        help="do not update BENCHMARKS.md (--quick never updates it)",
    )
    p.add_argument("--markdown", type=Path, default=BENCHMARKS_MD, help=argparse.SUPPRESS)
    return p


def run_one(
    name: str,
    run: RunFunc,
    *,
    quick: bool,
    repeats: int | None,
    results_dir: Path,
    trials: int | None = None,
    extra_args: Sequence[str] = (),
) -> dict[str, Any]:
    """Run one benchmark, stamp it with date/machine/versions/command and write its JSON."""
    extra = [*extra_args]
    if repeats:
        extra += ["--repeats", str(repeats)]
    if trials:
        extra += ["--trials", str(trials)]
    stamp = meta(bench_command(name, quick, extra))  # load average before the run
    result = run(quick=quick, repeats=repeats, trials=trials)
    result = {"benchmark": name, "quick": quick, **stamp, **result}
    path = write_result(results_dir, name, quick, result)
    log(f"{name}: wrote {path}")
    return result


def refresh_markdown(markdown: Path, results_dir: Path, results: list[dict[str, Any]]) -> None:
    """Rewrite the sections of ``results`` and the targets table (from every result file).

    A partial result (one that says what it left out) leaves BENCHMARKS.md as it is. A
    benchmark registered with ``keeps_result`` then keeps the result it shows in git.
    """
    from benchmarks.harness.common import load_result
    from benchmarks.harness.markdown import update_markdown, update_targets
    from benchmarks.registry import BY_NAME, SUITE

    for result in results:
        if result.get("partial"):
            log(f"{result['benchmark']}: BENCHMARKS.md left as it is: {result['partial']}")
    shown = [r for r in results if not r.get("partial")]
    if not shown:
        return
    update_markdown(markdown, shown)
    every = [load_result(results_dir, name) for name in SUITE]
    update_targets(markdown, [r for r in every if r is not None])
    for result in shown:
        entry = BY_NAME[result["benchmark"]]
        if entry.keeps_result:
            entry.keep_function()(result, results_dir)


def run_and_report(
    name: str, run: RunFunc, args: argparse.Namespace, extra_args: Sequence[str] = ()
) -> int:
    """Run one benchmark as ``args`` (from :func:`parser`) say, update BENCHMARKS.md, print it."""
    result = run_one(
        name,
        run,
        quick=args.quick,
        repeats=args.repeats,
        results_dir=args.results_dir,
        trials=args.trials,
        extra_args=extra_args,
    )
    if not args.quick and not args.no_md:
        refresh_markdown(args.markdown, args.results_dir, [result])
    from benchmarks.harness.markdown import render_summary

    print(render_summary(result))
    return 0


def bench_main(name: str, description: str, run: RunFunc, argv: Sequence[str] | None) -> int:
    """``main`` of a benchmark module: run it, write JSON, update BENCHMARKS.md."""
    return run_and_report(name, run, parser(description, name).parse_args(argv))
