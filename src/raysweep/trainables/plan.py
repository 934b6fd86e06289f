"""The spec's part of every trial's context: the one mapping, for both engines."""

from __future__ import annotations

from typing import Any

from raysweep.config.schema import SweepSpec, is_sampled
from raysweep.schedulers.build import pause_points
from raysweep.trainables.wrapper import TrialPlan


def trial_plan(spec: SweepSpec, gpu_fraction: float = 0.0, **paths: str | None) -> TrialPlan:
    """What every trial needs from the spec to seed itself and find its devices;
    ``paths``: TrialPlan's run-time paths."""
    return TrialPlan(
        trainable=spec.trainable,
        master_seed=spec.seed,
        metric=spec.metric,
        mode=spec.mode,
        trainable_args=dict(spec.trainable_args),
        cpus=spec.resources.threads_per_trial,
        gpu_fraction=gpu_fraction,
        deterministic=spec.reproducibility.deterministic,
        checkpoint_frequency=spec.checkpoint.frequency,
        checkpoint_at=pause_points(spec),
        **paths,
    )


def constant_space(spec: SweepSpec) -> dict[str, Any]:
    """The constants of the space: merged into every suggested config (as Ray does)."""
    return {k: v for k, v in spec.space.items() if not is_sampled(v)}
