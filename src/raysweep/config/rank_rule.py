"""The ranking rules' names and defaults, without pydantic (read-only commands rank too)."""

from __future__ import annotations

from typing import Literal

RankBy = Literal["last", "best"]
RANK_BY_CHOICES: tuple[str, ...] = ("last", "best")
DEFAULT_RANK_BY: RankBy = "best"
# trainables whose metrics are cumulative over iterations
RANK_BY_DEFAULTS: dict[str, RankBy] = {"trading": "last"}


def default_rank_by(trainable: str) -> RankBy:
    """The ranking rule a sweep of ``trainable`` gets when sweep.json sets none."""
    return RANK_BY_DEFAULTS.get(trainable, DEFAULT_RANK_BY)
