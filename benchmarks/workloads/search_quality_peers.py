"""The peers of the search-quality benchmark, each through its own API (peers' venv).

``python -m benchmarks.workloads.search_quality_peers --problem mfh6 --optimizer dehb
--seed 1 --budget 540 --workers 4`` prints one JSON object: the observations in the
order they were made, each ``[budget used, wall s, value, regret, fidelity, own
regret]`` (search_quality_clock.py), and the reference a held-out problem's regrets are
measured from. Trials run on a simulated clock with ``workers`` workers; spaces come
from the problem's ``params`` (search_quality_space.py), in each optimizer's own terms.

Every peer gets what raysweep's recipes get: 4 workers (``--workers``; the recipes'
``max_concurrent``), the same budget in fidelity steps, and the fidelity levels
min 1, max the problem's ``max_fidelity``, reduction factor (eta) 3 as each one's
API takes them (Optuna's pruners ``min_resource=1, reduction_factor=3``, Hyperband's
``max_resource``; DEHB ``min_fidelity=1, max_fidelity, eta=3``; SMAC3 ``min_budget=1,
max_budget`` and Hyperband ``eta=3``; Syne Tune ``grace_period=1, max_t,
reduction_factor=3``; hpbandster ``eta=3`` and the budgets its master computes from
min 1 and the max). The rungs each derives from them are its own: with 27 steps
every one uses 1, 3, 9, 27; with trading's 8 folds Optuna's pruners and Syne Tune's
ASHA use rungs 1 and 3, hpbandster 8/9, 8/3 and 8 (run as 1, 3, 8), and DEHB and
SMAC3 8/3 and 8 (run as 3 and 8: their ladders start at max / eta^k).

What each peer returns (``Record.own``, asked after every result it is told; the
source read is the installed release of benchmarks/requirements-peers.txt):

- Optuna 5.0: ``study.best_trial``, the best COMPLETE trial, a pruned one never
  (optuna/study/study.py ``best_trial``; optuna/storages/_in_memory.py
  ``get_best_trial`` raises "No trials are completed yet." before one: no incumbent);
- SMAC3 2.4: ``smac.intensifier.get_incumbent()``, kept by ``update_incumbents`` after
  each tell (smac/intensifier/abstract_intensifier.py ``get_incumbent``,
  ``update_incumbents``; for Hyperband, successive_halving.py's
  ``incumbent_selection="highest_observed_budget"``, the MultiFidelityFacade's default);
- DEHB 0.1.2: ``inc_config`` (``get_incumbents()``), replaced in ``tell`` whenever a
  fitness at any fidelity beats ``inc_score`` (dehb/optimizers/dehb.py ``tell``,
  ``_update_incumbents``): the best value seen at any fidelity;
- hpbandster 0.7.4: ``Result.get_incumbent_id()`` over the iterations so far, built as
  its master builds its Result: the lowest loss among runs on the maximum budget, none
  before one (hpbandster/core/result.py ``get_incumbent_id``; core/master.py ``run``);
- Syne Tune 0.16: no incumbent in the scheduler API; its users take
  ``ExperimentResult.best_config()``, the best metric over every reported result, at
  any fidelity (syne_tune/experiments/experiment_result.py ``best_config``): the best
  value told so far (``Record`` without ``own``).

Where a peer names none yet, the harness falls back to the best value observed at any
fidelity, the same for every optimizer (harness/regret.py).

Syne Tune's BOHB is configured as its docs show (``BOHB(config_space, metric,
time_attr, max_t, ...)``, its defaults). Its searcher is the KDE wrapped by
``LastValueMultiFidelitySearcher`` (each trial's last value, every rung together);
the KDE fits only when its good set has more points than there are parameters, with
``top_n_percent=15`` and ``num_min_data_points`` at least the number of parameters
(kde_searcher.py ``_check_data_shape_and_good_size``; the constructor asserts the
minimum): 60 trials with a result on trading's 8 parameters, 47 on Hartmann-6's 6.
Until then it draws at random from numpy's global generator exactly as ASHA's random
searcher does, so the two runs are identical. On a stand-in of trading's shape (8
parameters, 8 folds, 160 folds of budget, 4 workers) ASHA started 69 trials and
BOHB's KDE first fitted at its 60th: the model proposes only the last few, which
rarely end before the budget does, so BOHB repeats ASHA's figures there. That is the
peer as its users get it, not a misconfiguration; no documented setting lowers the bar.

HEBO is not a peer yet. Its last release, 0.3.6 (PyPI, 2024-11), installs and runs here.
``pip install hebo`` in a fresh venv was still backtracking through old pandas and
matplotlib source releases after 8 minutes (stopped there); with its dependencies named
(``--no-deps hebo==0.3.6 pymoo==0.6.0 GPy gpytorch linear_operator paramz disjoint-set
cma autograd alive-progress`` and their few small dependencies), over numpy 2.4, pandas
3.1, torch 2.13 CPU and catboost 1.2 of the project's environment (GPy 1.15.0 has a
wheel, pymoo 0.6.0 builds from source without its compiled modules), an 8-step
suggest/observe loop ran. Making it a peer means those in the peers' environment (torch
among them) and a full-fidelity runner like ``smac-bo``'s.
Syne Tune 0.16 has no MOBSTER or Hyper-Tune any more; its other model-based
multi-fidelity searcher, ASHA-CQR, imports ``huggingface_hub`` (not installed). The
runners of DEHB, SMAC3, hpbandster and Syne Tune are in search_quality_peer_apis.py.

Runs in the peers' virtual environment (benchmarks/requirements-peers.txt): imports
neither raysweep nor Ray (trading asks a process of raysweep's environment).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from benchmarks.workloads.search_quality_clock import Record, stepwise_run
from benchmarks.workloads.search_quality_peer_apis import (
    dehb_run,
    hpbandster_run,
    smac_bo_run,
    smac_run,
    syne_run,
)
from benchmarks.workloads.search_quality_problems import PROBLEMS, Problem
from benchmarks.workloads.search_quality_space import Param

__all__ = ["OPTIMIZERS", "Record", "optuna_pruned_run", "peer_runs_on", "run"]


def optuna_run(record: Record, seed: int, workers: int, pruner: str) -> None:
    """Optuna 5 TPE (its defaults) with a pruner (``none``, ``sha``, ``hyperband``)."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    z_max = record.problem.max_fidelity
    pruners: dict[str, Callable[[], Any]] = {
        "none": optuna.pruners.NopPruner,
        "sha": lambda: optuna.pruners.SuccessiveHalvingPruner(min_resource=1, reduction_factor=3),
        "hyperband": lambda: optuna.pruners.HyperbandPruner(
            min_resource=1, max_resource=z_max, reduction_factor=3
        ),
    }
    optuna_pruned_run(record, seed, workers, pruners[pruner]())


def optuna_pruned_run(record: Record, seed: int, workers: int, pruner: Any,
                      sampler: str = "tpe") -> None:  # fmt: skip
    """Optuna 5 TPE (its defaults; ``sampler="random"``: its random sampler) whose trials
    ``pruner`` (an Optuna pruner) may stop."""
    import optuna

    z_max = record.problem.max_fidelity
    samplers = {"tpe": optuna.samplers.TPESampler, "random": optuna.samplers.RandomSampler}
    study = optuna.create_study(sampler=samplers[sampler](seed=seed), pruner=pruner)
    record.own = lambda: _optuna_best(study)

    def start() -> tuple[Any, dict[str, Any]]:
        trial = study.ask()
        return trial, {p.name: _suggest(trial, p) for p in record.problem.params}

    def deliver(trial: Any, z: int, value: float) -> bool:
        trial.report(value, z)
        if z == z_max:
            study.tell(trial, value)
            return False
        if trial.should_prune():
            study.tell(trial, state=optuna.trial.TrialState.PRUNED)
            return False
        return True

    stepwise_run(record, workers, start, deliver)


def _optuna_best(study: Any) -> dict[str, Any] | None:
    """``study.best_trial``'s parameters: the best COMPLETE trial (None before one)."""
    try:
        return dict(study.best_trial.params)
    except ValueError:  # optuna/study/_optimize... "No trials are completed yet."
        return None


def _suggest(trial: Any, p: Param) -> Any:
    if p.choices:
        return trial.suggest_categorical(p.name, list(p.choices))
    if p.integer:
        return int(trial.suggest_int(p.name, int(p.low), int(p.high), log=p.log))
    return float(trial.suggest_float(p.name, p.low, p.high, log=p.log))


OPTIMIZERS: dict[str, Callable[[Record, int, int], None]] = {
    "optuna-tpe": lambda r, s, w: optuna_run(r, s, w, "none"),
    "optuna-tpe-sha": lambda r, s, w: optuna_run(r, s, w, "sha"),
    "optuna-tpe-hyperband": lambda r, s, w: optuna_run(r, s, w, "hyperband"),
    "dehb": dehb_run,
    "smac-mf": smac_run,
    "syne-asha": lambda r, s, w: syne_run(r, s, w, "asha"),
    "syne-bohb": lambda r, s, w: syne_run(r, s, w, "bohb"),
    "syne-asha-bore": lambda r, s, w: syne_run(r, s, w, "asha-bore"),
    "hpbandster-bohb": hpbandster_run,
    "smac-bo": smac_bo_run,
}
# the peers that need no fidelity axis; the others run only where a problem has one
FULL_FIDELITY = ("optuna-tpe", "smac-bo")


def peer_runs_on(peer: str, problem: Problem) -> bool:
    """Whether ``peer`` can run on ``problem``: a multi-fidelity peer needs a fidelity axis."""
    return peer in FULL_FIDELITY or problem.max_fidelity > 1


def run(problem: str, optimizer: str, seed: int, budget: int, workers: int) -> dict[str, Any]:
    record = Record(PROBLEMS[problem], budget)
    OPTIMIZERS[optimizer](record, seed, workers)
    return {"observations": record.observations,
            "reference": getattr(record.problem, "reference", None)}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--problem", choices=sorted(PROBLEMS), required=True)
    p.add_argument("--optimizer", choices=sorted(OPTIMIZERS), required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--budget", type=int, required=True, help="fidelity units")
    p.add_argument("--workers", type=int, default=4)
    args = p.parse_args(argv)
    out = run(args.problem, args.optimizer, args.seed, args.budget, args.workers)
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
