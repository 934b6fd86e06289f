"""Random search: independent draws from the space (grid parameters crossed)."""

from __future__ import annotations

from typing import Any

from ray.tune.search import Searcher

from raysweep.search.variants import VariantSearcher


def make_random(
    space: dict[str, Any],
    num_samples: int,
    seed: int,
    metric: str,
    mode: str,
    options: dict[str, Any],
) -> Searcher:
    """Random search seeded by the master seed."""
    return VariantSearcher(space, num_samples=num_samples, seed=seed, metric=metric, mode=mode)
