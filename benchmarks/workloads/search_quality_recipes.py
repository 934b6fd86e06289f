"""raysweep's recipes in the search-quality benchmark: sweep.json as a user writes it.

Every recipe runs through ``sweep run`` (benchmarks/harness/launch.py) on the
multi-fidelity Hartmann trainable below, or for ``lgbm`` the built-in ``lightgbm``
trainable on the local engine (search_quality_lgbm.py), for ``trading`` the built-in
``trading`` trainable on Ray (search_quality_trading.py), ``SLOTS`` (4) trials at once.
A recipe's trial budget is sized so that it can spend the benchmark's fidelity budget: a trial
run to the end costs ``max_fidelity`` units, so full-fidelity recipes get
``budget / max_fidelity`` trials and the early-stopping ones more (their curves
are cut at the budget).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.workloads.search_quality_problems import PROBLEMS, Problem

# 4 trials at once, as the issue asks; the peers' simulated workers are the same number.
# A trial takes one CPU where the machine has 4, else its share of them (0.5 on 2 CPUs:
# ``resources.cpus_per_trial`` takes a fraction for light trials such as these).
SLOTS = 4
CPUS_PER_TRIAL: float = min(1, (os.cpu_count() or 1) / SLOTS)
TRAINABLE = "benchmarks.workloads.search_quality_recipes:mf_hartmann"


def mf_hartmann(config: dict[str, Any]) -> None:
    """Reports the problem's value at fidelity 1, 2, ... (one report per step), each step
    taking ``step_s`` seconds where the config sets it (else the microseconds of a formula)."""
    from ray import tune

    problem = PROBLEMS[str(config["problem"])]
    step_s = float(config.get("step_s", 0.0))
    for z in range(1, problem.max_fidelity + 1):
        if step_s:
            time.sleep(step_s)
        tune.report({"value": problem.value(config, z)})


def base(problem: Problem, seed: int, trials: int, search: dict[str, Any]) -> dict[str, Any]:
    space: dict[str, Any] = {p.name: p.sweep_json() for p in problem.params}
    own = problem.sweep_fields() if hasattr(problem, "sweep_fields") else {}
    if not own:
        space["problem"] = problem.name
    config = {
        "name": "sq",
        "trainable": TRAINABLE,
        "metric": "value",
        "mode": "min",
        "space": space,
        "search": {"num_samples": trials, "max_concurrent": SLOTS, **search},
        "resources": {"cpus_per_trial": CPUS_PER_TRIAL},
        "seed": seed,
        "stop": {"max_iterations": problem.max_fidelity},
    }
    return {**config, **own}


def asha(problem: Problem, grace: int = 1) -> dict[str, Any]:
    return {"type": "asha", "max_t": problem.max_fidelity, "grace_period": grace,
            "reduction_factor": 3}  # fmt: skip


Recipe = Callable[[Problem, int, int], dict[str, Any]]


def _optuna(options: dict[str, Any] | None = None, scale: float = 1.0, mf: bool = False,
            strict: str | None = None, size: int = 4, engine: str | None = None,
            grace: int = 1, step_s: float = 0.0,
            rung_rule: str | None = None) -> Recipe:  # fmt: skip
    """``"algorithm": "optuna"`` (TPE unless ``options`` names another sampler); ``step_s``:
    each fidelity step of the Hartmann trainable lasts that long; ``rung_rule``: ASHA's
    (unset: a new sweep's default)."""

    def make(problem: Problem, seed: int, full: int) -> dict[str, Any]:
        search: dict[str, Any] = {"algorithm": "optuna"}
        if options is not None:
            search["options"] = options
        config = base(problem, seed, int(full * scale), search)
        if mf:
            config["scheduler"] = asha(problem, grace)
            if rung_rule is not None:
                config["scheduler"]["rung_rule"] = rung_rule
        if strict:  # the schedule: "batch" or "window", of size 4 unless said
            config["reproducibility"] = {"strict": True, "batch_size": size,
                                         "strict_schedule": strict}  # fmt: skip
        if engine is not None:
            config["execution"] = engine
        if step_s:
            config["space"]["step_s"] = step_s
        return config

    return make


def _plain(algorithm: str, scale: float = 1.0) -> Recipe:
    def make(problem: Problem, seed: int, full: int) -> dict[str, Any]:
        return base(problem, seed, int(full * scale), {"algorithm": algorithm})

    return make


def _hyperband(problem: Problem, seed: int, full: int) -> dict[str, Any]:
    config = base(problem, seed, 3 * full, {"algorithm": "random"})
    config["scheduler"] = {"type": "hyperband", "max_t": problem.max_fidelity,
                           "reduction_factor": 3}  # fmt: skip
    del config["search"]["max_concurrent"]  # brackets must fill; the CPUs still allow 4
    config["execution"] = "ray"  # the local engine refuses Hyperband (it pauses trials)
    return config


def _grid(problem: Problem, seed: int, full: int) -> dict[str, Any]:
    config = base(problem, seed, 1, {"algorithm": "grid"})
    levels = [0.15, 0.5, 0.85]
    config["space"].update({n: {"type": "grid", "values": levels} for n in problem.names})
    return config


def _mftpe(rule: str = "quorum", strict: bool = False, algorithm: str = "mf-tpe") -> Recipe:
    """``algorithm`` (mf-tpe: TPE learning from every report) with ASHA under ``rule``;
    ``strict``: strict mode's window of ``SLOTS``."""

    def make(problem: Problem, seed: int, full: int) -> dict[str, Any]:
        config = base(problem, seed, 6 * full, {"algorithm": algorithm})
        config["scheduler"] = {**asha(problem), "rung_rule": rule}
        if strict:
            config["reproducibility"] = {"strict": True, "batch_size": SLOTS,
                                         "strict_schedule": "window"}  # fmt: skip
        return config

    return make


RECIPES: dict[str, Recipe] = {
    "random": _plain("random"),
    "grid (3 levels)": _grid,
    "hyperopt": _plain("hyperopt"),
    "tpe": _optuna(),
    "tpe univariate (before)": _optuna({"multivariate": False}),
    "tpe strict batch 4": _optuna(strict="batch"),
    "tpe strict window 4": _optuna(strict="window"),
    "tpe strict window 2": _optuna(strict="window", size=2),
    "tpe + asha": _optuna(mf=True, scale=6),
    # TPE + ASHA in strict mode's window (its rungs settled by trial index)
    "tpe + asha strict": _optuna(mf=True, scale=6, strict="window"),
    "tpe univariate + asha (before)": _optuna({"multivariate": False}, mf=True, scale=6),
    "random + hyperband": _hyperband,
    "gp": _optuna({"sampler": "gp"}),
    "cmaes": _optuna({"sampler": "cmaes"}),
    "gp + asha": _optuna({"sampler": "gp"}, mf=True, scale=6),
    "tpe + asha (ray engine)": _optuna(mf=True, scale=6, engine="ray"),
    "tpe + asha (grace 3)": _optuna(mf=True, scale=6, grace=3),
    "tpe + asha (grace 9)": _optuna(mf=True, scale=6, grace=9),
    # a step lasts longer than a trial takes to start (20-200 ms here), as in real training:
    # the first trials then meet at each rung instead of the first running alone to the end
    "tpe + asha (50 ms steps)": _optuna(mf=True, scale=6, step_s=0.05),
    # Ray Tune's own rung rule, the default before "rank" (BENCHMARKS.md: ASHA's rung rule)
    "tpe + asha (ray's rule)": _optuna(mf=True, scale=6, rung_rule="percentile"),
    "tpe + asha (ray's rule; 50 ms steps)": _optuna(
        mf=True, scale=6, step_s=0.05, rung_rule="percentile"
    ),
    # the multi-fidelity searcher (search/mftpe.py) with ASHA's quorum rule, and in strict mode
    "mf-tpe + asha": _mftpe(),
    "mf-tpe + asha strict": _mftpe(strict=True),
    "mf-tpe + asha (rank rule)": _mftpe(rule="rank"),
    "tpe + asha (quorum rule)": _mftpe(algorithm="optuna"),
    # the default's ASHA with random suggestions: what of a result is the searcher's doing
    "random + asha (quorum rule)": _mftpe(algorithm="random"),
}
# The scored recipes (benchmarks/PROTOCOL.md), fixed before a run: raysweep's default for a
# sweep with a fidelity axis, for one without, and the first in strict mode. The only
# recipes in the scored table; the others are studies, run when named (--recipes) and
# reported apart.
DEFAULT_WITH_FIDELITY = "mf-tpe + asha"
DEFAULT_WITHOUT_FIDELITY = "tpe"
DEFAULT_STRICT = "mf-tpe + asha strict"
SCORED = (DEFAULT_WITH_FIDELITY, DEFAULT_WITHOUT_FIDELITY, DEFAULT_STRICT)
STUDIES = tuple(name for name in RECIPES if name not in SCORED)


def scored_on(problem: str) -> tuple[str, ...]:
    """The scored recipes of ``problem``: its kind's default first, then, where it has a
    fidelity axis, the strict one."""
    if PROBLEMS[problem].max_fidelity > 1:
        return (DEFAULT_WITH_FIDELITY, DEFAULT_STRICT)
    return (DEFAULT_WITHOUT_FIDELITY,)


MULTI_FIDELITY = ("mf-tpe + asha", "mf-tpe + asha strict", "mf-tpe + asha (rank rule)",
                  "tpe + asha (quorum rule)", "random + asha (quorum rule)", "tpe + asha",
                  "tpe + asha strict",
                  "tpe univariate + asha (before)", "random + hyperband",
                  "tpe + asha (ray engine)", "gp + asha", "tpe + asha (grace 3)",
                  "tpe + asha (grace 9)", "tpe + asha (50 ms steps)", "tpe + asha (ray's rule)",
                  "tpe + asha (ray's rule; 50 ms steps)")  # fmt: skip
GRID_PROBLEMS = ("mfh3",)  # 3 levels per parameter: 27 points in 3 dimensions
# recipes run on one problem only (the others run everywhere, grid on GRID_PROBLEMS):
# Hartmann's recipes already run on Ray; lgbm's run locally, one of them on Ray too
ONLY_ON = {"tpe + asha (ray engine)": ("lgbm",), "tpe + asha (grace 3)": ("lgbm",),
           "tpe + asha (grace 9)": ("lgbm",), "tpe + asha (50 ms steps)": ("mfh3", "mfh6"),
           "tpe + asha (ray's rule)": ("mfh3", "mfh6", "lgbm", "trading"),
           "tpe + asha (ray's rule; 50 ms steps)": ("mfh3", "mfh6")}  # fmt: skip
# lgbm measures strict mode with its batches only (the window's figures are Hartmann's),
# the tables and trading with the window of 4 (the window of 2 equals TPE at 2 slots, on
# Hartmann); the "(before)" recipes and GP + ASHA stay on the problems they were measured on
SKIP_ON = {"lgbm": ("tpe univariate (before)", "tpe univariate + asha (before)",
                    "tpe strict window 4", "tpe strict window 2"),
           "hpolib": ("tpe univariate (before)", "tpe strict window 2"),
           "nb201": ("tpe univariate (before)", "tpe strict window 2"),
           "trading": ("tpe univariate (before)", "tpe univariate + asha (before)",
                       "tpe strict window 2", "gp + asha")}  # fmt: skip


@functools.cache  # asked for each seed's run: the spec resolves once per recipe and problem
def resolved_digest(recipe: str, problem: str, full: int) -> str:
    """8 hex digits of the spec ``recipe`` resolves to on ``problem`` today, the seed and
    name aside: a default that changes (ASHA's rung rule, TPE's options) changes it, so
    ``--reuse`` never takes a run recorded under an older default for a new one."""
    from raysweep.config.load import parse_spec, spec_to_json
    from raysweep.errors import ConfigError

    config = RECIPES[recipe](PROBLEMS[problem], 1, full)
    try:
        spec = spec_to_json(parse_spec(config))
    except ConfigError:  # a recipe sweep run refuses: never recorded, named all the same
        spec = config
    spec.pop("seed", None)
    spec.pop("name", None)
    args = spec.get("trainable_args") or {}
    for key in ("dataset", "data"):  # a data file: its name (its content's digest), not where
        if isinstance(args.get(key), str) and "/" in args[key]:
            spec["trainable_args"] = {**args, key: Path(args[key]).name}
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:8]


def runs_on(recipe: str, problem: str) -> bool:
    """Whether the benchmark runs ``recipe`` on ``problem`` (no early stopping where the
    problem has no fidelity axis)."""
    if recipe.startswith("grid") and problem not in GRID_PROBLEMS:
        return False
    if recipe in MULTI_FIDELITY and PROBLEMS[problem].max_fidelity == 1:
        return False
    return problem in ONLY_ON.get(recipe, (problem,)) and recipe not in SKIP_ON.get(problem, ())
