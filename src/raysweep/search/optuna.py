"""Optuna search (TPE by default) through Ray Tune's OptunaSearch."""

from __future__ import annotations

from typing import Any

from ray.tune.search import Searcher


def make_optuna(
    space: dict[str, Any],
    num_samples: int,
    seed: int,
    metric: str,
    mode: str,
    options: dict[str, Any],
) -> Searcher:
    """OptunaSearch with a seeded sampler chosen by ``options.sampler``."""
    import optuna
    from ray.tune.search.optuna import OptunaSearch

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    name = options.get("sampler", "tpe")
    startup = int(options.get("n_startup_trials", 10))
    sampler: optuna.samplers.BaseSampler
    if name == "tpe":
        sampler = optuna.samplers.TPESampler(
            seed=seed, n_startup_trials=startup, multivariate=bool(options.get("multivariate"))
        )
    elif name == "cmaes":
        sampler = optuna.samplers.CmaEsSampler(seed=seed, n_startup_trials=startup)
    elif name == "gp":
        sampler = optuna.samplers.GPSampler(seed=seed, n_startup_trials=startup)
    else:
        sampler = optuna.samplers.RandomSampler(seed=seed)
    return OptunaSearch(
        space=OptunaSearch.convert_search_space(space),
        metric=metric,
        mode=mode,
        sampler=sampler,
    )
