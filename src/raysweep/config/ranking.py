"""``"rank_by"``: which of a trial's values of the metric ranks it (no Ray here).

``"best"``: the best value over the trial's iterations (results.json's
``best_metric``), right for a loss that each iteration re-measures. ``"last"``:
the value the trial ended with, right for metrics cumulated over the
iterations, such as the trading trainable's scores over walk-forward folds: one
trial's best was 3.73 on its first fold and its final value 0.009, so ranking by
the best put it first on the strength of one fold. When ``rank_by`` is not
set, the trainable decides (``rank_rule.RANK_BY_DEFAULTS``), and spec.json leaves the
field out so specs and their hashes stay as they were.
"""

from __future__ import annotations

from pydantic import Field

from raysweep.config.base import StrictModel
from raysweep.config.rank_rule import RankBy, default_rank_by


class RankByField(StrictModel):
    """The ``rank_by`` field of ``SweepSpec`` (a base class, so schema.py stays small)."""

    rank_by: RankBy | None = Field(
        default=None,
        description="which value ranks a trial: 'best' over its iterations or its 'last'; "
        "unset: 'last' for the trading trainable (cumulative metrics), else 'best'",
    )

    @property
    def ranking(self) -> RankBy:
        """``rank_by``, or the trainable's default when unset."""
        trainable: str = getattr(self, "trainable", "")
        return self.rank_by or default_rank_by(trainable)
