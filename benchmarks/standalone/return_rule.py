"""Which trial a sweep that stops trials early should return: three rules on the same runs.

Optuna's TPE (its defaults) with raysweep's ``quorum`` rung rule (Ray's ASHA bracket with
raysweep's cutoff, as ``asha_rule``), ``--workers`` trials at once on the peers'
simulated clock. Each run is read, at each fraction of the budget, by three rules
(benchmarks/PROTOCOL.md, "Return rule"):

- ``best``: the best value observed at any fidelity (``sweep best`` under ``rank_by:
  "best"``);
- ``complete``: the best value at the maximum fidelity among the trials that reached it
  (Optuna's ``best_trial``), ``best`` while none has;
- ``populated``: the best value at the highest fidelity that at least ``--quorum``
  trials have reported, among those trials; ``best`` before any fidelity has that many.

Per problem and budget point: each rule's median true regret, and ``complete`` and
``populated`` over ``best`` (ratio of medians, 95% bootstrap interval over the paired
seeds, Wilcoxon signed-rank p).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.harness.common import prog
from benchmarks.harness.protocol import wilcoxon_p
from benchmarks.standalone.asha_rule import FRACTIONS, ray_pruner
from benchmarks.standalone.strict_schedules import ratio_interval
from benchmarks.workloads.search_quality_peers import Record, optuna_pruned_run
from benchmarks.workloads.search_quality_problems import PROBLEMS, Problem

RULES = ("best", "complete", "populated")


@dataclass(frozen=True)
class Report:
    """One report of a run: budget used once it was made, its trial, fidelity and value."""

    used: float
    trial: tuple[Any, ...]  # the configuration as the trial key (identical configs: one trial)
    fidelity: int
    value: float


def reports(problem: str, seed: int, budget: int, workers: int) -> list[Report]:
    """One run (TPE, the quorum rule) as its reports, in the order they were made."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    record = Record(PROBLEMS[problem], budget)
    optuna_pruned_run(record, seed, workers, ray_pruner(record.problem.max_fidelity, "quorum"))
    return [
        Report(float(obs[0]), tuple(sorted(config.items())), int(obs[4]), float(obs[2]))
        for obs, config in zip(record.observations, record.configs, strict=True)
    ]


def returned(made: Sequence[Report], rule: str, max_fidelity: int, quorum: int) -> Report | None:
    """The report whose trial ``rule`` returns, of the reports ``made`` so far."""
    if not made:
        return None
    best = min(made, key=lambda r: r.value)
    if rule == "best":
        return best
    if rule == "complete":
        level: int | None = max_fidelity
    else:
        trials_at: dict[int, set[tuple[Any, ...]]] = {}
        for r in made:
            trials_at.setdefault(r.fidelity, set()).add(r.trial)
        level = max((z for z, ts in trials_at.items() if len(ts) >= quorum), default=None)
    at_level = [r for r in made if r.fidelity == level]
    return min(at_level, key=lambda r: r.value) if at_level else best


def regrets(runs: Sequence[Sequence[Report]], problem: Problem, budget: float, rule: str,
            quorum: int, regret: Callable[[tuple[Any, ...]], float]) -> list[float]:  # fmt: skip
    """Per run: the true regret of what ``rule`` returns within ``budget``."""
    out = []
    for run in runs:
        chosen = returned([r for r in run if r.used <= budget + 1e-9], rule,
                          problem.max_fidelity, quorum)  # fmt: skip
        out.append(float("inf") if chosen is None else regret(chosen.trial))
    return out


def cached_regret(problem: Problem) -> Callable[[tuple[Any, ...]], float]:
    """``problem``'s true regret of a trial's configuration, each computed once."""
    cache: dict[tuple[Any, ...], float] = {}

    def regret(trial: tuple[Any, ...]) -> float:
        if trial not in cache:
            cache[trial] = problem.regret(dict(trial))
        return cache[trial]

    return regret


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog=prog("return_rule"), description=__doc__.splitlines()[0])
    p.add_argument("--problems", default="mfh3,mfh6,lgbm,xgb",
                   help=f"comma-separated, of {sorted(PROBLEMS)}")  # fmt: skip
    p.add_argument("--seeds", type=int, default=30, help="seeds FIRST..FIRST+N-1")
    p.add_argument("--first-seed", type=int, default=1001)
    p.add_argument("--trials", type=int, default=20, help="budget in full-fidelity trials")
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--quorum", type=int, default=3, help="trials a fidelity needs (populated)")
    args = p.parse_args(argv)
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    print("| problem | budget | " + " | ".join(RULES) + " | "
          + " | ".join(f"{r} / best [95% CI], p" for r in RULES[1:]) + " |")  # fmt: skip
    print("|---|---|" + "---|" * (2 * len(RULES) - 1))
    for name in args.problems.split(","):
        problem = PROBLEMS[name]
        if problem.max_fidelity == 1:
            p.error(f"{name} has no fidelity axis: every rule returns the same trial")
        budget = args.trials * problem.max_fidelity
        runs = [reports(name, seed, budget, args.workers) for seed in seeds]
        regret = cached_regret(problem)
        for f in FRACTIONS:
            at = {rule: regrets(runs, problem, f * budget, rule, args.quorum, regret)
                  for rule in RULES}  # fmt: skip
            medians = {rule: statistics.median(at[rule]) for rule in RULES}
            cells = [f"{medians[rule]:.3g}" for rule in RULES]
            for rule in RULES[1:]:
                low, high = ratio_interval(list(zip(at[rule], at["best"], strict=True)))
                ratio = medians[rule] / medians["best"] if medians["best"] else 1.0
                cells.append(f"{ratio:.2f} [{low:.2f}, {high:.2f}], "
                             f"{wilcoxon_p(at[rule], at['best']):.2g}")  # fmt: skip
            print(f"| {name} | {int(f * 100)}% | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
