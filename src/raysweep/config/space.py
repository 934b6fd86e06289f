"""The parameter DSL of sweep.json's ``space`` block (pure data; knows nothing of Ray)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from raysweep.config.base import StrictModel


class SampledParam(StrictModel):
    """What every parameter may carry: ``when``, the condition under which it exists.

    ``"when": {"entry_model": "lightgbm"}`` (or a list of values): the parameter is
    drawn only in trials whose ``entry_model`` takes one of the values; other trials'
    configs do not hold it (``config/conditions.py``).
    """

    when: dict[str, list[Any]] | None = None

    @field_validator("when", mode="before")
    @classmethod
    def _one_parent(cls, value: Any) -> Any:
        if value is None:
            return None
        if not isinstance(value, dict) or len(value) != 1:
            raise ValueError(
                "must name exactly one parameter and its value(s), e.g. "
                '{"entry_model": "lightgbm"} or {"entry_model": ["lightgbm", "xgboost"]}'
            )
        ((parent, values),) = value.items()
        values = values if isinstance(values, list) else [values]
        if not values:
            raise ValueError(f"{parent}: needs at least one value")
        return {parent: values}

    @model_serializer(mode="wrap")
    def _omit_no_condition(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> Any:
        data = handler(self)
        if isinstance(data, dict) and "when" in data:
            when = data.pop("when")  # last, and only when there is a condition: an
            if when is not None:  # unconditional parameter serialises as it always did
                data["when"] = when
        return data


class UniformParam(SampledParam):
    """A float drawn uniformly from [low, high)."""

    type: Literal["uniform"]
    low: float
    high: float

    @model_validator(mode="after")
    def _bounds(self) -> UniformParam:
        _check_order(self.low, self.high)
        return self


class LogUniformParam(SampledParam):
    """A float drawn log-uniformly from [low, high); low must be > 0."""

    type: Literal["loguniform"]
    low: float
    high: float

    @model_validator(mode="after")
    def _bounds(self) -> LogUniformParam:
        if self.low <= 0:
            raise ValueError(f"low: must be > 0 for a loguniform parameter (got {self.low})")
        _check_order(self.low, self.high)
        return self


class QUniformParam(SampledParam):
    """A float drawn uniformly from [low, high] and rounded to a multiple of q."""

    type: Literal["quniform"]
    low: float
    high: float
    q: float

    @model_validator(mode="after")
    def _bounds(self) -> QUniformParam:
        if self.q <= 0:
            raise ValueError(f"q: must be > 0 (got {self.q})")
        _check_order(self.low, self.high)
        return self


class IntParam(SampledParam):
    """An integer in [low, high] (both inclusive), optionally log-scaled or stepped."""

    type: Literal["int"]
    low: int
    high: int
    log: bool = False
    step: int = 1

    @model_validator(mode="after")
    def _bounds(self) -> IntParam:
        if self.step < 1:
            raise ValueError(f"step: must be >= 1 (got {self.step})")
        _check_order(self.low, self.high)
        if self.log and self.low < 1:
            raise ValueError(f"low: must be >= 1 for a log-scaled int (got {self.low})")
        if self.log and self.step != 1:
            raise ValueError(f"step: a log-scaled int cannot have a step (got {self.step})")
        return self


class ChoiceParam(SampledParam):
    """One of ``values``, drawn by the searcher."""

    type: Literal["choice"]
    values: list[Any] = Field(min_length=1)


class GridParam(SampledParam):
    """Every one of ``values``, crossed with the other grid parameters."""

    type: Literal["grid"]
    values: list[Any] = Field(min_length=1)


Param = Annotated[
    UniformParam | LogUniformParam | QUniformParam | IntParam | ChoiceParam | GridParam,
    Field(discriminator="type"),
]
PARAM_TYPES = ("uniform", "loguniform", "quniform", "int", "choice", "grid")


def _check_order(low: float, high: float) -> None:
    if low >= high:
        raise ValueError(f"low: must be < high (got {low} >= {high})")


def is_param_dict(value: Any) -> bool:
    """A JSON object with a ``type`` key is a parameter; anything else is a constant."""
    return isinstance(value, dict) and "type" in value
