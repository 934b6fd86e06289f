"""DEHB, SMAC3, hpbandster and Syne Tune driven through their own APIs on the simulated
clock (the peers' venv; search_quality_peers.py says what each returns and why)."""

from __future__ import annotations

import argparse
import math
import time
from typing import Any

from benchmarks.workloads.search_quality_clock import Record, ask_tell_run, stepwise_run
from benchmarks.workloads.search_quality_space import Param


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
    or BORE's classifier (``asha-bore``), as its baselines build them."""
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
