"""``search.options`` models, one per algorithm (schema.py validates them by name).

A field whose default is None is left out of the resolved options when unset
(``model_dump(exclude_none=True)``), so specs written before it existed keep
their sha256.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from raysweep.config.base import StrictModel


class OptunaOptions(StrictModel):
    """``search.options`` for ``optuna``."""

    sampler: Literal["tpe", "cmaes", "gp", "random", "nsga2"] = "tpe"
    n_startup_trials: int = Field(default=10, ge=0)
    multivariate: bool = False
    # TPE only. None (absent from a spec.json written before they existed): Optuna's
    # own default; a new sweep records them (config/search_defaults.py).
    constant_liar: bool | None = None
    group: bool | None = None

    @model_validator(mode="after")
    def _tpe_only(self) -> OptunaOptions:
        for key in ("constant_liar", "group"):
            if getattr(self, key) is not None and self.sampler != "tpe":
                raise ValueError(f"{key}: only for sampler 'tpe' (got sampler {self.sampler!r})")
        if self.group and not self.multivariate:
            raise ValueError("group: needs multivariate true (got multivariate false)")
        return self


class MFTPEOptions(StrictModel):
    """``search.options`` for ``mf-tpe`` (search/mftpe.py).

    ``group`` unset: true where the space has conditional parameters, as for Optuna's TPE.
    """

    n_startup_trials: int = Field(default=5, ge=0)
    multivariate: bool = True
    group: bool | None = None

    @model_validator(mode="after")
    def _group(self) -> MFTPEOptions:
        if self.group and not self.multivariate:
            raise ValueError("group: needs multivariate true (got multivariate false)")
        return self


class HyperOptOptions(StrictModel):
    """``search.options`` for ``hyperopt``.

    ``n_initial_points`` is 10 random trials before TPE takes over (Optuna's TPE
    default), not Ray's 20: at nightly budgets of tens of trials, 20 random starts
    would spend half the budget before the model is used.
    """

    n_initial_points: int = Field(default=10, ge=0)
    gamma: float = Field(default=0.25, gt=0, lt=1)


class NoOptions(StrictModel):
    """``grid`` and ``random`` take no options."""
