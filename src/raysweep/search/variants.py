"""Grid and random search as a Searcher, built on Ray Tune's own variant generator."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
from ray.tune.search import Searcher
from ray.tune.search.variant_generator import generate_variants


class VariantSearcher(Searcher):
    """Suggests ``num_samples`` passes over the grid, sampling the other parameters.

    Same semantics as Ray Tune's BasicVariantGenerator (grid parameters crossed,
    distributions sampled per point), but as a Searcher so it can be wrapped like
    the model-based ones. Suggestions never depend on results, so they are
    reproducible from the seed alone.

    ``points`` (warm start) take the first suggestions: each replaces the values
    of the variant it stands in for (a parameter a point lacks keeps the
    variant's), so every later suggestion, and every trial index, is what it
    would be without them.
    """

    def __init__(
        self,
        space: dict[str, Any],
        num_samples: int,
        seed: int,
        metric: str | None = None,
        mode: str | None = None,
        points: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        super().__init__(metric=metric, mode=mode)
        self.space = space
        self.num_samples = num_samples
        self.seed = seed
        self.points = [dict(p) for p in points]
        self.emitted = 0
        self._iterator: Iterator[dict[str, Any]] | None = None

    def _variants(self) -> Iterator[dict[str, Any]]:
        random_state = np.random.RandomState(self.seed % 2**32)
        count = 0
        for _ in range(self.num_samples):
            for _resolved, config in generate_variants(self.space, random_state=random_state):
                if count < len(self.points):
                    config = {**config, **self.points[count]}
                count += 1
                yield config

    def suggest(self, trial_id: str) -> dict[str, Any] | None:
        if self._iterator is None:
            self._iterator = self._variants()
            for _ in range(self.emitted):  # fast-forward after a restore
                next(self._iterator, None)
        config = next(self._iterator, None)
        if config is None:
            return Searcher.FINISHED  # type: ignore[return-value]  # Ray's sentinel string
        self.emitted += 1
        return config

    def on_trial_complete(
        self, trial_id: str, result: dict[str, Any] | None = None, error: bool = False
    ) -> None:
        """Random and grid search learn nothing from results."""

    def save(self, checkpoint_path: str) -> None:
        with open(checkpoint_path, "w", encoding="utf-8") as fh:
            json.dump({"seed": self.seed, "emitted": self.emitted, "points": self.points}, fh)

    def restore(self, checkpoint_path: str) -> None:
        """Replay the sequence from the seed up to where the saved searcher stopped."""
        with open(checkpoint_path, encoding="utf-8") as fh:
            state = json.load(fh)
        self.seed, self.emitted = state["seed"], state["emitted"]
        self.points = state.get("points", self.points)  # older runs saved none
        self._iterator = None


def make_variants(
    space: dict[str, Any],
    num_samples: int,
    seed: int,
    metric: str,
    mode: str,
    options: dict[str, Any],
    points: Sequence[Mapping[str, Any]] = (),
) -> Searcher:
    """Factory for ``grid`` and ``random`` (they differ only in what the space may hold).

    ``points``: warm-start configurations, suggested first (random search).
    """
    return VariantSearcher(
        space, num_samples=num_samples, seed=seed, metric=metric, mode=mode, points=points
    )
