"""Every benchmark, registered once: its name, what it measures, its quick variant, its command.

``python -m benchmarks.run --list`` prints this table. Each row is a module whose
``main(argv)`` runs it alone: ``python -m benchmarks.run NAME [flags]`` hands it
everything after NAME. Rows with ``suite=True`` are ``benchmarks/suite/NAME.py``,
the ones ``python -m benchmarks.run`` (``make bench``) runs through their ``run()``
function and writes into BENCHMARKS.md's ``<!-- bench:NAME -->`` sections; the
others are ``benchmarks/standalone/NAME.py``, scripts with their own flags, whose
figures are pasted into BENCHMARKS.md by hand. The shared
machinery lives in ``benchmarks/harness/``, what the benchmarks run (trainables,
peer programs, problems) in ``benchmarks/workloads/``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.harness.common import prog

RunFunc = Callable[..., dict[str, Any]]
MainFunc = Callable[[Sequence[str]], int]


@dataclass(frozen=True)
class Benchmark:
    """One registered benchmark; ``quick`` is the flags of its small, CI-sized variant."""

    name: str
    measures: str
    quick: str
    suite: bool = False  # in the suite benchmarks.run runs; section written from its JSON
    in_quick_suite: bool = False  # part of ``make bench-quick``
    usage: str = ""  # flags beyond the shared ones, as the module's --help names them
    # the result its section shows is kept in git by the module's ``keep(result, results_dir)``
    keeps_result: bool = False

    @property
    def module(self) -> str:
        return f"benchmarks.{'suite' if self.suite else 'standalone'}.{self.name}"

    @property
    def command(self) -> str:
        return f"{prog(self.name)}{' ' + self.usage if self.usage else ''}"

    def main_function(self) -> MainFunc:
        """The module's ``main(argv)``: ``python -m benchmarks.run NAME ARGS`` calls it on ARGS."""
        main: MainFunc = importlib.import_module(self.module).main
        return main

    def run_function(self) -> RunFunc:
        """The suite's entry point, imported only when the benchmark runs."""
        if not self.suite:
            raise ValueError(f"{self.name} is standalone, not in the suite: {prog(self.name)}")
        run: RunFunc = importlib.import_module(self.module).run
        return run

    def keep_function(self) -> Callable[[dict[str, Any], Any], None]:
        """The module's ``keep``: stores the result BENCHMARKS.md now shows (``keeps_result``)."""
        keep: Callable[[dict[str, Any], Any], None] = importlib.import_module(self.module).keep
        return keep


BENCHMARKS: tuple[Benchmark, ...] = (
    Benchmark("overhead", "trials/s of no-op trials on 2 slots: sweep run vs raw Ray Tune",
              "--quick", suite=True, in_quick_suite=True),
    Benchmark("slots", "slot efficiency: ideal wall time over actual for 1 s trials on 2 CPUs",
              "--quick", suite=True),
    Benchmark("first_trial", "process start to the first trial's body running",
              "--quick", suite=True, in_quick_suite=True),
    Benchmark("early_stopping", "ASHA and Hyperband vs full-budget random search: compute "
              "to reach the same loss", "--quick", suite=True),
    Benchmark("search_quality", "benchmarks/PROTOCOL.md: regret of what each optimizer "
              "returns at 10-100% of the budget on multi-fidelity Hartmann-3/6, HPOLib, "
              "NAS-Bench-201, LightGBM and XGBoost (boosting rounds as fidelity, held-out "
              "test rows) and the trading workload (walk-forward folds, later bars held out), "
              "4 workers: raysweep's default recipes vs Optuna, DEHB, SMAC3, Syne Tune, "
              "hpbandster",
              "--quick", suite=True, in_quick_suite=True, keeps_result=True),
    Benchmark("scale", "10,000 no-op trials: wall time and late/early throughput",
              "--quick", suite=True, in_quick_suite=True),
    Benchmark("gpu", "the CNN-LSTM trading sweep at 1, 0.5, 0.25, 0.125 GPU, with and "
              "without MPS (needs an NVIDIA GPU)", "--quick", suite=True),
    Benchmark("knobs", "what each Ray setting in engines/ray/ray_env.py is worth (no-op sweep)",
              "--quick", suite=True, usage="[--only NAME,NAME]"),
    Benchmark("peer_optuna", "the same GBM sweeps through sweep run and one plain Optuna "
              "process", "--quick", suite=True, in_quick_suite=True,
              usage="[--workloads demo,random200]"),
    Benchmark("early_stopping_settings", "other ASHA / Hyperband settings on benchmark 4's "
              "workload", "--seeds 1", usage="[--seeds 1,2,3] [--only NAME,NAME]"),
    Benchmark("dashboard_cost", "what Ray's dashboard adds to a sweep's start-up",
              "--repeats 1 --trials 10", usage="[--repeats N] [--trials N]"),
    Benchmark("nightly_overhead", "what nightly.sh adds to a night beyond the sweep",
              "--nights 2 --repeats 1", usage="[--nights N] [--repeats N]"),
    Benchmark("peer_before_after", "the peer workloads through sweep run from two source "
              "trees, interleaved", "--before BEFORE/src --repeats 1",
              usage="--before BEFORE/src [--repeats N]"),
    Benchmark("report_scale", "report.html size and build time for a 10,000-trial run",
              "--trials 1000 --repeats 1", usage="[--trials N] [--repeats N] [--keep DIR]"),
    Benchmark("status_scale", "sweep status / best / list on a 10,000-trial run",
              "--trials 1000 --repeats 1", usage="[--trials N] [--repeats N]"),
    Benchmark("resume_bench", "resume after kill -9: latency and trials redone",
              "--repeats 1", usage="[--repeats N]"),
    Benchmark("trading_throughput", "features and backtest of one fold on 100,000 bars",
              "--bars 10000 --repeats 1", usage="[--bars N] [--repeats N] [--json]"),
    Benchmark("validate_time", "sweep validate on every config in sweeps/",
              "--repeats 1", usage="[--repeats N]"),
    Benchmark("strict_schedules", "strict mode's batches vs window: regret and slot use of "
              "the real searcher chain on a simulated clock, many seeds",
              "--seeds 3 --problems mfh3",
              usage="[--seeds N] [--trials N] [--slots N] [--problems P] [--recipes R]"),
    Benchmark("asha_rule", "ASHA's rung rules vs Optuna's successive halving under the "
              "same sampler on a simulated clock, many seeds; and which trial to return",
              "--seeds 3 --problems mfh3",
              usage="[--seeds N] [--first-seed S] [--trials N] [--workers N] [--problems P] "
                    "[--sampler tpe|random] [--incumbents]"),
    Benchmark("return_rule", "which trial a sweep that stops trials early returns: the best "
              "value at any fidelity, the best complete trial, or the best at the highest "
              "fidelity 3 trials reached, on the same simulated runs",
              "--seeds 2 --problems mfh3",
              usage="[--seeds N] [--first-seed S] [--trials N] [--workers N] [--problems P] "
                    "[--quorum K]"),
)  # fmt: skip

BY_NAME: dict[str, Benchmark] = {b.name: b for b in BENCHMARKS}
SUITE: tuple[str, ...] = tuple(b.name for b in BENCHMARKS if b.suite)
QUICK_SUITE: tuple[str, ...] = tuple(b.name for b in BENCHMARKS if b.in_quick_suite)


def render_table() -> str:
    """The table ``--list`` prints: Markdown, so BENCHMARKS.md can hold the same text."""
    lines = [
        "| name | measures | in `benchmarks.run` | quick variant's flags | command |",
        "| --- | --- | --- | --- | --- |",
    ]
    for b in BENCHMARKS:
        where = ("full + quick" if b.in_quick_suite else "full") if b.suite else "standalone"
        lines.append(f"| {b.name} | {b.measures} | {where} | `{b.quick}` | `{b.command}` |")
    return "\n".join(lines)
