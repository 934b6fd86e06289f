"""The peers of the search-quality benchmark, each through its own API (peers' venv).

``python -m benchmarks.workloads.search_quality_peers --problem mfh6 --optimizer dehb
--seed 1 --budget 540 --workers 4`` prints one JSON object: the observations in
the order they were made, each ``[budget used, wall s, value, regret, fidelity]``.

Evaluations are a formula (search_quality_problems.py) or, for ``lgbm``, a small
LightGBM fit (search_quality_lgbm.py), so trials run on a simulated clock:
``workers`` trials are in flight at once, one fidelity step costs one unit of each
worker's time, and the worker whose clock is earliest moves next (as Syne Tune's
simulated backend does). What the optimizers see is then what they would see with
``workers`` slots of equal speed; the wall time is their own (ask, tell, pruning)
plus, for ``lgbm``, the fits (evaluations of the Hartmann functions cost next to
nothing). Spaces come from the problem's ``params`` (search_quality_space.py), in
each optimizer's own terms.

Runs in the peers' virtual environment (benchmarks/requirements-peers.txt):
imports neither raysweep nor Ray.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable
from typing import Any

from benchmarks.workloads.search_quality_clock import Record, ask_tell_run, stepwise_run
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


def optuna_pruned_run(record: Record, seed: int, workers: int, pruner: Any) -> None:
    """Optuna 5 TPE (its defaults) whose trials ``pruner`` (an Optuna pruner) may stop."""
    import optuna

    z_max = record.problem.max_fidelity
    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=seed), pruner=pruner)
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


def configspace(record: Record, seed: int) -> Any:
    from ConfigSpace import Categorical, ConfigurationSpace, Float, Integer

    def one(p: Param) -> Any:
        if p.choices:
            return Categorical(p.name, list(p.choices))
        if p.integer:
            return Integer(p.name, (int(p.low), int(p.high)), log=p.log)
        return Float(p.name, (p.low, p.high), log=p.log)

    space = ConfigurationSpace(seed=seed)
    space.add([one(p) for p in record.problem.params])
    return space


def dehb_run(record: Record, seed: int, workers: int) -> None:
    """DEHB (Awad et al., 2021) through its ask/tell interface."""
    from dehb import DEHB

    space = configspace(record, seed)
    opt = DEHB(cs=space, min_fidelity=1, max_fidelity=record.problem.max_fidelity, eta=3,
               n_workers=1, seed=seed, output_path=f"/tmp/dehb-{seed}-{time.time_ns()}",
               log_level="ERROR")  # fmt: skip
    record.own = lambda: None if opt.inc_config is None else dict(opt.get_incumbents()[0])

    def unpack(job: Any) -> tuple[dict[str, float], int]:
        return dict(job["config"]), round(job["fidelity"])

    def tell(job: Any, value: float, z: int) -> None:
        opt.tell(job, {"fitness": value, "cost": float(z)})

    ask_tell_run(record, workers, lambda: _dehb_ask(opt, space), tell, unpack)


def _dehb_ask(opt: Any, space: Any) -> Any:
    job = opt.ask()
    config = job["config"]
    if not hasattr(config, "keys"):  # a vector in [0, 1]: DEHB's own encoding
        config = opt.vector_to_configspace(config)
    return {**job, "config": dict(config)}


def smac_run(record: Record, seed: int, workers: int) -> None:
    """SMAC3's multi-fidelity facade (random forest + Hyperband) through ask/tell."""
    from smac import MultiFidelityFacade, Scenario
    from smac.intensifier.hyperband import Hyperband
    from smac.runhistory.dataclasses import TrialValue

    space = configspace(record, seed)
    scenario = Scenario(space, deterministic=True, n_trials=10**6, min_budget=1,
                        max_budget=record.problem.max_fidelity, seed=seed,
                        output_directory=f"/tmp/smac-{seed}-{time.time_ns()}")  # fmt: skip
    smac = MultiFidelityFacade(
        scenario,
        lambda config, seed=0, budget=1: 0.0,
        intensifier=Hyperband(scenario, eta=3),
        overwrite=True,
        logging_level=40,
    )
    record.own = lambda: _smac_incumbent(smac)

    def unpack(info: Any) -> tuple[dict[str, float], int]:
        return dict(info.config), round(info.budget)

    def tell(info: Any, value: float, z: int) -> None:
        smac.tell(info, TrialValue(cost=value))

    ask_tell_run(record, workers, smac.ask, tell, unpack)


def _smac_incumbent(smac: Any) -> dict[str, Any] | None:
    """The intensifier's incumbent (None before its first)."""
    incumbent = smac.intensifier.get_incumbent()
    return None if incumbent is None else dict(incumbent)


def smac_bo_run(record: Record, seed: int, workers: int) -> None:
    """SMAC3's hyperparameter-optimization facade (random forest, Sobol initial design),
    every evaluation at full fidelity, through ask/tell."""
    from smac import HyperparameterOptimizationFacade, Scenario
    from smac.runhistory.dataclasses import TrialValue

    z_max = record.problem.max_fidelity
    scenario = Scenario(configspace(record, seed), deterministic=True,
                        n_trials=record.budget // z_max + workers, seed=seed,
                        output_directory=f"/tmp/smac-bo-{seed}-{time.time_ns()}")  # fmt: skip
    smac = HyperparameterOptimizationFacade(scenario, lambda config, seed=0: 0.0,
                                            overwrite=True, logging_level=40)  # fmt: skip
    record.own = lambda: _smac_incumbent(smac)

    def tell(info: Any, value: float, z: int) -> None:
        smac.tell(info, TrialValue(cost=value))

    ask_tell_run(record, workers, smac.ask, tell, lambda info: (dict(info.config), z_max))


def hpbandster_run(record: Record, seed: int, workers: int) -> None:
    """hpbandster's BOHB (Falkner et al., 2018): its KDE config generator and its
    Hyperband iterations, driven as its master drives them (a worker takes the next run
    of the earliest active iteration, else a new iteration starts), without its
    nameserver and dispatcher, which only carry jobs to remote workers."""
    import numpy as np
    from hpbandster.core.dispatcher import Job
    from hpbandster.optimizers.bohb import BOHB as Master
    from hpbandster.optimizers.config_generators.bohb import BOHB as KDE

    np.random.seed(seed)  # the KDE samples from numpy's global generator
    z_max = record.problem.max_fidelity
    sh_iterations = round(math.log(z_max, 3)) + 1
    master = argparse.Namespace(  # the fields Master.get_next_iteration reads
        config_generator=KDE(configspace=configspace(record, seed)), eta=3,
        max_SH_iter=sh_iterations,
        budgets=z_max * np.power(3.0, -np.linspace(sh_iterations - 1, 0, sh_iterations)),
    )  # fmt: skip
    iterations: list[Any] = []
    record.own = lambda: _hpbandster_incumbent(iterations, float(master.budgets[-1]))

    def ask() -> Any:
        for iteration in iterations:
            if not iteration.is_finished and (run := iteration.get_next_run()) is not None:
                break
        else:
            iterations.append(Master.get_next_iteration(master, len(iterations)))
            run = iterations[-1].get_next_run()
        config_id, config, budget = run
        return Job(config_id, config=config, budget=budget)

    def tell(job: Any, value: float, z: int) -> None:
        job.result = {"loss": value, "info": {}}
        iterations[job.id[0]].register_result(job)
        master.config_generator.new_result(job)

    def unpack(job: Any) -> tuple[dict[str, float], int]:
        return dict(job.kwargs["config"]), round(job.kwargs["budget"])

    ask_tell_run(record, workers, ask, tell, unpack)


def _hpbandster_incumbent(iterations: list[Any], max_budget: float) -> dict[str, Any] | None:
    """``Result.get_incumbent_id()`` over the iterations so far, as the master builds its
    Result (hpbandster/core/master.py): None before a run on the maximum budget."""
    from hpbandster.core.result import Result

    result = Result([it.data for it in iterations], {"max_budget": max_budget, "time_ref": 0.0})
    config_id = result.get_incumbent_id()
    return None if config_id is None else dict(result.data[config_id].config)


def syne_run(record: Record, seed: int, workers: int, kind: str) -> None:
    """Syne Tune's ASHA with its searcher at each rung: random (``asha``), KDE (``bohb``)
    or BORE's classifier (``asha-bore``).

    Syne Tune 0.16 has no MOBSTER or Hyper-Tune any more; its other model-based
    multi-fidelity searcher, ASHA-CQR, imports ``huggingface_hub`` (not installed)."""
    from datetime import datetime

    import numpy as np
    from syne_tune.backend.trial_status import Trial
    from syne_tune.config_space import choice, lograndint, loguniform, randint, uniform
    from syne_tune.optimizer.baselines import ASHA, ASHABORE, BOHB
    from syne_tune.optimizer.scheduler import SchedulerDecision

    np.random.seed(seed)  # ASHA draws each trial's bracket from numpy's global generator
    z_max = record.problem.max_fidelity
    domains = {(False, False): uniform, (True, False): loguniform, (False, True): randint,
               (True, True): lograndint}  # fmt: skip
    space = {p.name: choice(list(p.choices)) if p.choices
             else domains[p.log, p.integer](p.cast(p.low), p.cast(p.high))
             for p in record.problem.params}  # fmt: skip
    kinds = {"asha": ASHA, "bohb": BOHB, "asha-bore": ASHABORE}
    scheduler = kinds[kind](
        space, metric="value", time_attr="epoch", max_t=z_max, do_minimize=True,
        random_seed=seed, grace_period=1, reduction_factor=3,
    )  # fmt: skip
    started: list[Trial] = []

    def start() -> tuple[Any, dict[str, Any]]:
        suggestion = scheduler.suggest()
        trial = Trial(trial_id=len(started), config=suggestion.config, creation_time=datetime.now())
        started.append(trial)
        scheduler.on_trial_add(trial)
        return trial, dict(trial.config)

    def deliver(trial: Any, z: int, value: float) -> bool:
        result = {"value": value, "epoch": z}
        decision = scheduler.on_trial_result(trial, result)
        if z == z_max:
            scheduler.on_trial_complete(trial, result)
            return False
        return bool(decision != SchedulerDecision.STOP)

    stepwise_run(record, workers, start, deliver)


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
