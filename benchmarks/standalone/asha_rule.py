"""Ray's ASHA rung rule against Optuna's successive halving, the same TPE, many seeds, no Ray run.

The search-quality benchmark's TPE + ASHA (Ray's ``ASHAScheduler`` in ``sweep run``)
trailed Optuna's TPE + ``SuccessiveHalvingPruner`` early in the budget on Hartmann-3.
This isolates the rung rule: Optuna's own TPE (its 5.0 defaults, as the peer) on the
peers' simulated clock (``--workers`` trials at once, one fidelity step one unit of
time), its trials stopped either by Optuna's ``SuccessiveHalvingPruner`` or by Ray's
ASHA bracket itself (``ray.tune.schedulers.async_hyperband._Bracket``, the object
``ASHAScheduler`` asks, told each step's result), the same rungs (grace 1, reduction
factor 3) and seeds. The rest of the chain is the same, so the ratio is the rule's.
A third rule is raysweep's ``rank`` (``scheduler.rung_rule``, the default for new
sweeps): Ray's bracket with raysweep's ``RuleBracket`` cutoff, which should decide
as Optuna's pruner does, step for step.

Per problem and fraction of the budget: each rule's median regret and Ray's, then
raysweep's, over Optuna's with a 95% bootstrap interval (seeds paired).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Sequence
from typing import Any

from benchmarks.harness.common import prog
from benchmarks.harness.regret import regret_at
from benchmarks.standalone.strict_schedules import ratio_interval
from benchmarks.workloads.search_quality_peers import Record, optuna_pruned_run
from benchmarks.workloads.search_quality_problems import PROBLEMS

RULES = ("optuna-sha", "ray-asha", "raysweep-rank")
FRACTIONS = (0.1, 0.25, 0.5, 1.0)
REDUCTION_FACTOR = 3


def ray_pruner(max_t: int, rank: bool = False) -> Any:
    """An Optuna pruner that asks Ray's ASHA bracket, as ``ASHAScheduler.on_trial_result``
    (``rank``: the bracket raysweep's ``rung_rule: "rank"`` builds)."""
    import optuna
    from ray.tune.schedulers.async_hyperband import _Bracket
    from ray.tune.schedulers.trial_scheduler import TrialScheduler

    from raysweep._raycompat.asha_rungs import RuleBracket

    class Handle:  # what _Bracket reads of a trial
        def __init__(self, number: int) -> None:
            self.trial_id = str(number)

    if rank:
        bracket = RuleBracket(1, max_t, REDUCTION_FACTOR, 0, rule="rank")
    else:
        bracket = _Bracket(min_t=1, max_t=max_t, reduction_factor=REDUCTION_FACTOR, s=0)

    class RayAsha(optuna.pruners.BasePruner):  # type: ignore[misc]
        def prune(self, study: Any, trial: Any) -> bool:
            step = trial.last_step  # reward: the negated loss, as Ray's mode "min"
            action = bracket.on_result(Handle(trial.number), step, -trial.intermediate_values[step])
            return bool(action == TrialScheduler.STOP)

    return RayAsha()


def run(problem: str, rule: str, seed: int, budget: int, workers: int) -> list[list[float]]:
    """One Optuna TPE run under ``rule``: the observations, as a peer's."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    record = Record(PROBLEMS[problem], budget)
    if rule in ("ray-asha", "raysweep-rank"):
        pruner = ray_pruner(record.problem.max_fidelity, rank=rule == "raysweep-rank")
    else:
        pruner = optuna.pruners.SuccessiveHalvingPruner(
            min_resource=1, reduction_factor=REDUCTION_FACTOR
        )
    optuna_pruned_run(record, seed, workers, pruner)
    return record.observations


def _regret(run: list[list[float]], budget: float) -> float:
    regret = regret_at(run, budget)
    return float("inf") if regret is None else regret


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog=prog("asha_rule"), description=__doc__.splitlines()[0])
    p.add_argument("--problems", default="mfh3", help=f"comma-separated, of {sorted(PROBLEMS)}")
    p.add_argument("--seeds", type=int, default=100)
    p.add_argument("--trials", type=int, default=20, help="budget in full-fidelity trials")
    p.add_argument("--workers", type=int, default=4)
    args = p.parse_args(argv)
    print("| problem | budget | optuna-sha | ray-asha | raysweep-rank | ray / optuna [95% CI] "
          "| raysweep / optuna [95% CI] |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for problem in args.problems.split(","):
        if PROBLEMS[problem].max_fidelity == 1:
            p.error(f"{problem} has no fidelity axis: no rungs to compare")
        budget = args.trials * PROBLEMS[problem].max_fidelity
        runs = {rule: [run(problem, rule, seed, budget, args.workers)
                       for seed in range(1, args.seeds + 1)] for rule in RULES}  # fmt: skip
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
