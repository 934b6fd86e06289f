"""Checks that a spec's search can run, done before anything starts."""

from __future__ import annotations

from raysweep._imports import require
from raysweep.config.schema import SweepSpec

# Optuna samplers whose model needs an optional package (the others need Optuna and
# its core dependencies alone; ``cmaes`` is one of raysweep's own dependencies).
SAMPLER_NEEDS = {"gp": "torch"}  # GPSampler fits its Gaussian process with torch


def check_search(spec: SweepSpec) -> None:
    """MissingExtraError (exit 2) naming the ``pip install`` a chosen sampler needs."""
    if spec.search.algorithm != "optuna":
        return
    sampler = str(spec.search.options.get("sampler", "tpe"))
    module = SAMPLER_NEEDS.get(sampler)
    if module:
        require(module, f"search.options.sampler {sampler!r}")
