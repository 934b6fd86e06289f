"""HyperOpt TPE through Ray Tune's HyperOptSearch."""

from __future__ import annotations

from typing import Any

from ray.tune.search import Searcher

N_INITIAL_POINTS = 10


def make_hyperopt(
    space: dict[str, Any],
    num_samples: int,
    seed: int,
    metric: str,
    mode: str,
    options: dict[str, Any],
) -> Searcher:
    """HyperOptSearch seeded through its own ``random_state_seed``.

    ``n_initial_points`` defaults to 10 random trials before TPE takes over (Optuna's
    TPE default), not Ray's 20: at nightly budgets of tens of trials, 20 random
    starts would spend half the budget before the model is used.
    """
    from ray.tune.search.hyperopt import HyperOptSearch

    return HyperOptSearch(
        space=HyperOptSearch.convert_search_space(space),
        metric=metric,
        mode=mode,
        random_state_seed=seed,
        n_initial_points=int(options.get("n_initial_points", N_INITIAL_POINTS)),
        gamma=float(options.get("gamma", 0.25)),
    )
