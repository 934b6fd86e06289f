"""Checks that a spec's search can run, done before anything starts, and its warnings."""

from __future__ import annotations

from raysweep._imports import require
from raysweep.config.schema import SweepSpec
from raysweep.config.space import ChoiceParam

# Optuna samplers whose model needs an optional package (the others need Optuna and
# its core dependencies alone; ``cmaes`` is one of raysweep's own dependencies).
SAMPLER_NEEDS = {"gp": "torch"}  # GPSampler fits its Gaussian process with torch


def optuna_sampler(spec: SweepSpec) -> str | None:
    """The Optuna sampler the spec chose (None for another algorithm)."""
    if spec.search.algorithm != "optuna":
        return None
    return str(spec.search.options.get("sampler", "tpe"))


def check_search(spec: SweepSpec) -> None:
    """MissingExtraError (exit 2) naming the ``pip install`` a chosen sampler needs."""
    sampler = optuna_sampler(spec)
    module = SAMPLER_NEEDS.get(sampler or "")
    if module:
        require(module, f"search.options.sampler {sampler!r}")


# Optuna samplers that learn from completed trials only: a trial an early-stopping
# scheduler stops teaches them nothing (TPE learns from those too, as pruned trials).
COMPLETED_ONLY = ("gp", "cmaes")


def search_warnings(spec: SweepSpec) -> list[str]:
    """Warnings for a search that defeats itself, printed as a run starts (both engines)."""
    sampler, scheduler = optuna_sampler(spec), spec.scheduler.type
    out = []
    # fifo stops nothing; hyperband's own warning says more
    if sampler in COMPLETED_ONLY and scheduler not in ("fifo", "hyperband"):
        out.append(
            f"warning: sampler {sampler!r} learns from completed trials only, and the "
            f"{scheduler} scheduler stops most trials early, so it learns from few "
            f"(docs/search.md); use algorithm 'mf-tpe' or sampler 'tpe' with {scheduler}, "
            f"or {sampler!r} with the fifo scheduler"
        )
    if sampler == "cmaes":
        choices = [name for name, param in spec.space.items() if isinstance(param, ChoiceParam)]
        if choices:
            out.append(
                f"warning: sampler 'cmaes' draws 'choice' parameters at random "
                f"({', '.join(choices)}): CMA-ES models numeric parameters only "
                "(docs/search.md); use sampler 'tpe'"
            )
    return out
