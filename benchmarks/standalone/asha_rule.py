"""Ray's ASHA rung rule against Optuna's successive halving, the same suggestions, many seeds,
no Ray run.

The search-quality benchmark's TPE + ASHA (Ray's ``ASHAScheduler`` in ``sweep run``)
trailed Optuna's TPE + ``SuccessiveHalvingPruner`` early in the budget on Hartmann-3.
This isolates the rung rule: Optuna's own sampler (TPE with its 5.0 defaults, as the
peer, or ``--sampler random``) on the peers' simulated clock (``--workers`` trials at
once, one fidelity step one unit of time), its trials stopped either by Optuna's
``SuccessiveHalvingPruner`` or by Ray's ASHA bracket itself
(``ray.tune.schedulers.async_hyperband._Bracket``, the object ``ASHAScheduler`` asks, told
each step's result), the same rungs (grace 1, reduction factor 3) and seeds. The rest of
the chain is the same, so the ratio is the rule's. raysweep's rules
(``scheduler.rung_rule``) are Ray's bracket with raysweep's ``RuleBracket`` cutoff:
``rank``, which should decide as Optuna's pruner does, step for step, and ``quorum``, the
search-quality default recipe's.

Per problem and fraction of the budget: each rule's median regret, then Ray's and
raysweep's over Optuna's with a 95% bootstrap interval (seeds paired). The configuration
scored is the one with the best value observed at any fidelity (``sweep best`` under
``rank_by: "best"``); ``--incumbents`` compares it, rule by rule, with the best trial
that reached the maximum fidelity (Optuna's ``best_trial``): median of each, their ratio
with its interval, and a Wilcoxon signed-rank p.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Sequence
from typing import Any

from benchmarks.harness.common import prog
from benchmarks.harness.protocol import wilcoxon_p
from benchmarks.harness.regret import regret_at, returned_at
from benchmarks.standalone.strict_schedules import ratio_interval
from benchmarks.workloads.search_quality_peers import Record, optuna_pruned_run
from benchmarks.workloads.search_quality_problems import PROBLEMS

RULES = ("optuna-sha", "ray-asha", "raysweep-rank", "raysweep-quorum")
BRACKET_RULES = {"ray-asha": "percentile", "raysweep-rank": "rank", "raysweep-quorum": "quorum"}
FRACTIONS = (0.1, 0.25, 0.5, 1.0)
REDUCTION_FACTOR = 3


def ray_pruner(max_t: int, rule: str = "percentile") -> Any:
    """An Optuna pruner that asks Ray's ASHA bracket, as ``ASHAScheduler.on_trial_result``:
    Ray's own (``percentile``) or the bracket raysweep's ``rung_rule`` builds (``rank``,
    ``quorum``)."""
    import optuna
    from ray.tune.schedulers.async_hyperband import _Bracket
    from ray.tune.schedulers.trial_scheduler import TrialScheduler

    from raysweep._raycompat.asha_rungs import RuleBracket

    class Handle:  # what the bracket reads of a trial
        def __init__(self, number: int) -> None:
            self.trial_id = str(number)
            self.config: dict[str, Any] = {}

    if rule == "percentile":
        bracket = _Bracket(min_t=1, max_t=max_t, reduction_factor=REDUCTION_FACTOR, s=0)
    else:
        bracket = RuleBracket(1, max_t, REDUCTION_FACTOR, 0, rule=rule)

    class RayAsha(optuna.pruners.BasePruner):  # type: ignore[misc]
        def prune(self, study: Any, trial: Any) -> bool:
            step = trial.last_step  # reward: the negated loss, as Ray's mode "min"
            action = bracket.on_result(Handle(trial.number), step, -trial.intermediate_values[step])
            return bool(action == TrialScheduler.STOP)

    return RayAsha()


def run(problem: str, rule: str, seed: int, budget: int, workers: int,
        sampler: str = "tpe") -> list[list[Any]]:  # fmt: skip
    """One Optuna run (``sampler``: its TPE or its random sampler) under ``rule``: the
    observations, as a peer's."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    record = Record(PROBLEMS[problem], budget)
    if rule in BRACKET_RULES:
        pruner = ray_pruner(record.problem.max_fidelity, BRACKET_RULES[rule])
    else:
        pruner = optuna.pruners.SuccessiveHalvingPruner(
            min_resource=1, reduction_factor=REDUCTION_FACTOR
        )
    optuna_pruned_run(record, seed, workers, pruner, sampler=sampler)
    return record.observations


def _regret(run: list[list[Any]], budget: float, incumbent: str = "observed") -> float:
    regret = regret_at(run, budget) if incumbent == "observed" else returned_at(run, budget)
    return float("inf") if regret is None else regret


def _rules_table(problem: str, budget: int, runs: dict[str, list[Any]]) -> None:
    for f in FRACTIONS:
        at = {rule: [_regret(r, f * budget) for r in runs[rule]] for rule in RULES}
        medians = {rule: statistics.median(at[rule]) for rule in RULES}
        cells = [f"{medians[rule]:.3g}" for rule in RULES]
        for rule in RULES[1:]:
            low, high = ratio_interval(list(zip(at[rule], at["optuna-sha"], strict=True)))
            sha = medians["optuna-sha"]
            ratio = medians[rule] / sha if sha else 1.0
            cells.append(f"{ratio:.2f} [{low:.2f}, {high:.2f}]")
        print(f"| {problem} | {int(f * 100)}% | " + " | ".join(cells) + " |", flush=True)


def _incumbents_table(problem: str, budget: int, runs: dict[str, list[Any]]) -> None:
    for rule in RULES:
        for f in FRACTIONS:
            observed = [_regret(r, f * budget) for r in runs[rule]]
            complete = [_regret(r, f * budget, "complete") for r in runs[rule]]
            a, b = statistics.median(observed), statistics.median(complete)
            low, high = ratio_interval(list(zip(observed, complete, strict=True)))
            print(f"| {problem} | {rule} | {int(f * 100)}% | {a:.3g} | {b:.3g} | "
                  f"{a / b if b else 1.0:.2f} [{low:.2f}, {high:.2f}] | "
                  f"{wilcoxon_p(observed, complete):.2g} |", flush=True)  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog=prog("asha_rule"), description=__doc__.splitlines()[0])
    p.add_argument("--problems", default="mfh3", help=f"comma-separated, of {sorted(PROBLEMS)}")
    p.add_argument("--seeds", type=int, default=100, help="seeds FIRST..FIRST+N-1")
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--trials", type=int, default=20, help="budget in full-fidelity trials")
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--sampler", choices=("tpe", "random"), default="tpe",
                   help="Optuna's sampler, the same under every rule")  # fmt: skip
    p.add_argument("--incumbents", action="store_true",
                   help="compare the best value at any fidelity with the best complete trial, "
                        "rule by rule")  # fmt: skip
    args = p.parse_args(argv)
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    if args.incumbents:
        print("| problem | rule | budget | best at any fidelity | best complete | any / complete "
              "[95% CI] | Wilcoxon p |")  # fmt: skip
        print("|---|---|---|---|---|---|---|")
    else:
        print("| problem | budget | " + " | ".join(RULES) + " | "
              + " | ".join(f"{r} / optuna [95% CI]" for r in RULES[1:]) + " |")  # fmt: skip
        print("|---|---|" + "---|" * (2 * len(RULES) - 1))
    for problem in args.problems.split(","):
        if PROBLEMS[problem].max_fidelity == 1:
            p.error(f"{problem} has no fidelity axis: no rungs to compare")
        budget = args.trials * PROBLEMS[problem].max_fidelity
        runs = {rule: [run(problem, rule, seed, budget, args.workers, args.sampler)
                       for seed in seeds] for rule in RULES}  # fmt: skip
        (_incumbents_table if args.incumbents else _rules_table)(problem, budget, runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
