"""Grid search: every point of the grid, ``num_samples`` times."""

from __future__ import annotations

from typing import Any

from ray.tune.search import Searcher

from raysweep.search.variants import VariantSearcher


def make_grid(
    space: dict[str, Any],
    num_samples: int,
    seed: int,
    metric: str,
    mode: str,
    options: dict[str, Any],
) -> Searcher:
    """Grid search; the seed only matters when the trainable itself is random."""
    return VariantSearcher(space, num_samples=num_samples, seed=seed, metric=metric, mode=mode)
