"""HyperOpt TPE through Ray Tune's HyperOptSearch."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ray.tune.search import Searcher

from raysweep.config.schema import HyperOptOptions
from raysweep.search.points import complete_points

N_INITIAL_POINTS: int = HyperOptOptions.model_fields["n_initial_points"].default
GAMMA: float = HyperOptOptions.model_fields["gamma"].default


def make_hyperopt(
    space: dict[str, Any],
    num_samples: int,
    seed: int,
    metric: str,
    mode: str,
    options: dict[str, Any],
    points: Sequence[Mapping[str, Any]] = (),
    native_space: dict[str, Any] | None = None,
) -> Searcher:
    """HyperOptSearch seeded through its own ``random_state_seed``.

    Option defaults are the config's (``HyperOptOptions``): 10 random trials
    before TPE, not Ray's 20. ``points``: warm-start configurations, suggested
    first (``points_to_evaluate``); missing parameters are drawn with ``seed``.
    ``native_space``: a HyperOpt space used instead of ``space`` (a conditional
    space's nested choices: search/conditional.py; it takes no ``points``).
    """
    from ray.tune.search.hyperopt import HyperOptSearch

    return HyperOptSearch(
        space=native_space or HyperOptSearch.convert_search_space(space),
        metric=metric,
        mode=mode,
        random_state_seed=seed,
        n_initial_points=int(options.get("n_initial_points", N_INITIAL_POINTS)),
        gamma=float(options.get("gamma", GAMMA)),
        points_to_evaluate=complete_points(points, space, seed) if points else None,
    )
