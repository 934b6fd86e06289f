"""Per-trial context handed to built-in trainables and readable by user trainables."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class TrialContext:
    """Everything a trainable needs beyond its hyperparameters.

    Attributes:
        index: order in which the searcher suggested this trial (0-based).
        seed: per-trial seed derived from the master seed and ``index``.
        metric / mode: the sweep's objective.
        trainable_args: the ``trainable_args`` block of sweep.json.
        cpus: CPU threads this trial may use.
        gpu_ids: physical GPU ids this trial may use (empty on CPU).
        gpu_fraction: share of each GPU (1.0 for whole GPUs).
        deterministic: whether deterministic algorithms were requested.
        checkpoint_frequency: save a checkpoint every N reports (0 = never).
        checkpoint_at: report numbers (1-based) that carry a checkpoint whatever the
            frequency: the scheduler's pause points (Hyperband's rungs), so a paused
            trial resumes where it stopped instead of starting over.
        master_seed: the sweep's seed (the same for every trial, e.g. for data splits).
    """

    index: int
    seed: int
    metric: str
    mode: str
    trainable_args: dict[str, Any] = field(default_factory=dict)
    cpus: int = 1
    gpu_ids: tuple[str, ...] = ()
    gpu_fraction: float = 0.0
    deterministic: bool = True
    checkpoint_frequency: int = 0
    checkpoint_at: frozenset[int] = frozenset()
    master_seed: int = 0

    @property
    def uses_gpu(self) -> bool:
        return bool(self.gpu_ids)

    @property
    def checkpointing(self) -> bool:
        """Whether any report of this trial carries a checkpoint."""
        return self.checkpoint_frequency > 0 or bool(self.checkpoint_at)

    def checkpoint_due(self, report: int) -> bool:
        """Whether the trial's ``report``-th report (counted from 1) should carry a checkpoint."""
        every = self.checkpoint_frequency
        return (every > 0 and report % every == 0) or report in self.checkpoint_at


_current: TrialContext | None = None


def set_trial_context(ctx: TrialContext | None) -> None:
    """Install the context of the trial now running in this process."""
    global _current
    _current = ctx


def trial_context() -> TrialContext:
    """The context of the running trial; raises outside a raysweep trial."""
    if _current is None:
        raise RuntimeError("raysweep.trial_context() is only available inside a raysweep trial")
    return _current


def trial_seed() -> int:
    """The seed raysweep derived for the running trial (already applied to all RNGs)."""
    return trial_context().seed
