"""The sweep.json models (pydantic v2, frozen, unknown keys refused). No Ray here."""

from __future__ import annotations

import math
import re
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

from raysweep.config.base import StrictModel, format_error
from raysweep.config.conditions import check_conditions
from raysweep.config.objectives import (
    Objective,
    SchedulerMetric,
    check_objectives,
    objective_pairs,
    split_objectives,
)
from raysweep.config.ranking import RankByField
from raysweep.config.resources import ResourcesConfig
from raysweep.config.search_options import (
    HyperOptOptions,
    MFTPEOptions,
    NoOptions,
    OptunaOptions,
)
from raysweep.config.space import GridParam, Param, is_param_dict

# The built-in trainables by name; raysweep.trainables.builtins maps each to its function.
BUILTIN_TRAINABLE_NAMES: tuple[str, ...] = (
    "lightgbm",
    "xgboost",
    "catboost",
    "torch_mlp",
    "trading",
)
ALGORITHMS = ("grid", "random", "optuna", "mf-tpe", "hyperopt")
GRID_ALGORITHMS = ("grid", "random")
OPTUNA_SAMPLERS = ("tpe", "cmaes", "gp", "random", "nsga2")
_PARAM_ADAPTER: TypeAdapter[Any] = TypeAdapter(Param)
_TRAINABLE_REF = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


_OPTIONS: dict[str, type[StrictModel]] = {
    "grid": NoOptions,
    "random": NoOptions,
    "optuna": OptunaOptions,
    "mf-tpe": MFTPEOptions,
    "hyperopt": HyperOptOptions,
}


class SearchConfig(StrictModel):
    """How configurations are suggested."""

    algorithm: Literal["grid", "random", "optuna", "mf-tpe", "hyperopt"] = "random"
    num_samples: int = Field(default=10, ge=1)
    max_concurrent: int | None = Field(default=None, ge=1)
    options: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _options_for_algorithm(self) -> SearchConfig:
        model = _OPTIONS[self.algorithm]
        valid = ", ".join(sorted(model.model_fields)) or "none"
        for key in self.options:
            if key not in model.model_fields:
                raise ValueError(
                    f"options.{key}: unknown option for algorithm {self.algorithm!r}; "
                    f"valid options: {valid}"
                )
        try:
            resolved = model.model_validate(self.options).model_dump(exclude_none=True)
        except ValidationError as exc:
            err = exc.errors()[0]
            raise ValueError(format_error({**err, "loc": ("options", *err["loc"])})) from None
        object.__setattr__(self, "options", resolved)
        return self


class FifoScheduler(StrictModel):
    """Run every trial to its end."""

    type: Literal["fifo"]


class AshaScheduler(SchedulerMetric):
    """Asynchronous successive halving."""

    type: Literal["asha"]
    max_t: int = Field(default=100, ge=1)
    grace_period: int = Field(default=1, ge=1)
    reduction_factor: float = Field(default=3, gt=1)
    brackets: int = Field(default=1, ge=1)
    # None: a spec.json written before this field, run with Ray's rule ("percentile") and
    # left out of spec.json so its hash stays; a new sweep records its rule
    # (config/search_defaults.py), "percentile" too when the config sets it
    rung_rule: Literal["rank", "quorum", "percentile"] | None = Field(
        default=None,
        description="which trials pass a rung: 'rank' keeps the best n // reduction_factor "
        "of the n results there, itself counted, and at least the best one (the ASHA paper, "
        "Optuna's successive halving); 'quorum' the same without that floor, so a rung "
        "passes nobody before it holds reduction_factor results (the first trials, drawn "
        "at random, are not run to the end); 'percentile' continues a trial at or above the "
        "(1 - 1/reduction_factor) "
        "percentile of those recorded before it (Ray Tune's ASHAScheduler); unset: 'rank' "
        "for a new sweep ('percentile' for a run started before the field existed)",
    )
    OMITTED_WHEN_UNSET: ClassVar[tuple[str, ...]] = ("rung_rule",)

    @model_validator(mode="after")
    def _grace(self) -> AshaScheduler:
        if self.grace_period > self.max_t:
            raise ValueError(
                f"grace_period: must be <= max_t (got {self.grace_period} > {self.max_t})"
            )
        return self


class HyperbandScheduler(SchedulerMetric):
    """Synchronous Hyperband."""

    type: Literal["hyperband"]
    max_t: int = Field(default=81, ge=1)
    reduction_factor: float = Field(default=3, gt=1)


class MedianScheduler(SchedulerMetric):
    """Median stopping rule."""

    type: Literal["median"]
    grace_period: int = Field(default=1, ge=0)
    min_samples_required: int = Field(default=3, ge=1)


SchedulerConfig = Annotated[
    FifoScheduler | AshaScheduler | HyperbandScheduler | MedianScheduler,
    Field(discriminator="type"),
]


class ReproducibilityConfig(StrictModel):
    """Determinism switches."""

    deterministic: bool = True
    strict: bool = False
    batch_size: int = Field(default=4, ge=1)
    # None: a spec.json written before this field, run with batches and left out of
    # spec.json so its hash stays; a new strict sweep records its schedule
    # (config/search_defaults.py), "batch" too when the config sets it
    strict_schedule: Literal["batch", "window"] | None = Field(
        default=None,
        description="strict mode: 'window' suggests trial i once trials <= i - batch_size "
        "have finished; 'batch' hands out fixed batches of batch_size; unset: 'window' for "
        "a new strict sweep ('batch' for a run started before the window existed)",
    )

    @property
    def schedule(self) -> Literal["batch", "window"]:
        """The strict schedule this spec runs with (unset: the batches of older runs)."""
        return self.strict_schedule or "batch"

    @model_serializer(mode="wrap")
    def _omit_unset_schedule(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if type(data) is dict and data.get("strict_schedule") is None:
            data.pop("strict_schedule", None)  # spec.json and its hash as before the field
        return data


class StopConfig(StrictModel):
    """When the whole sweep, or each trial, stops."""

    time_budget_s: float | None = Field(default=None, gt=0)
    max_iterations: int | None = Field(default=None, ge=1)


class CheckpointSettings(StrictModel):
    """Trial checkpoints."""

    frequency: int = Field(default=5, ge=0)
    num_to_keep: int = Field(default=2, ge=1)


class MlflowSettings(StrictModel):
    """``logging.mlflow``: Ray Tune's MLflow logger, one MLflow run per trial."""

    tracking_uri: str | None = Field(
        default=None,
        min_length=1,
        description="MLflow tracking URI (sqlite:///mlflow.db, http://host:5000, ...); "
        "default: MLflow's own (MLFLOW_TRACKING_URI)",
    )
    experiment_name: str | None = Field(
        default=None, min_length=1, description="MLflow experiment; default: the sweep's name"
    )


class LoggingSettings(StrictModel):
    """``logging``: Ray Tune's TensorBoard and MLflow loggers, beside the run directory."""

    tensorboard: bool = Field(
        default=False, description="TensorBoard event files in each trial's folder under tune/"
    )
    mlflow: MlflowSettings | None = None


class SweepSpec(RankByField):  # rank_by: config/ranking.py
    """A validated sweep.json. Immutable; every default filled in."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", max_length=128)
    trainable: str
    trainable_args: dict[str, Any] = Field(default_factory=dict)
    metric: str = Field(min_length=1)
    mode: Literal["min", "max"]
    objectives: list[Objective] | None = None  # "metric": [...]: metric/mode are the first
    space: dict[str, Any]
    search: SearchConfig = Field(default_factory=SearchConfig)
    scheduler: SchedulerConfig = Field(default_factory=lambda: FifoScheduler(type="fifo"))
    resources: ResourcesConfig = Field(default_factory=ResourcesConfig)
    seed: int = Field(default=0, ge=0, lt=2**63)
    reproducibility: ReproducibilityConfig = Field(default_factory=ReproducibilityConfig)
    stop: StopConfig = Field(default_factory=StopConfig)
    checkpoint: CheckpointSettings = Field(default_factory=CheckpointSettings)
    max_failures: int = Field(default=0, ge=0)
    logging: LoggingSettings = Field(default_factory=LoggingSettings)
    execution: Literal["ray", "local"] = "ray"  # or in this process, no Ray: engines/local/

    @model_validator(mode="before")
    @classmethod
    def _objective_lists(cls, data: Any) -> Any:
        return split_objectives(data)

    @field_validator("space", mode="before")
    @classmethod
    def _parse_space(cls, value: Any) -> Any:
        if not isinstance(value, dict) or not value:
            raise ValueError("must be a non-empty object of parameter name -> definition")
        return value

    @field_validator("space", mode="after")
    @classmethod
    def _parse_params(cls, value: dict[str, Any]) -> dict[str, Any]:
        parsed: dict[str, Any] = {}
        for key, item in value.items():
            if not is_param_dict(item):
                parsed[key] = item
                continue
            try:
                parsed[key] = _PARAM_ADAPTER.validate_python(item)
            except ValidationError as exc:
                err = exc.errors()[0]
                loc = tuple(err["loc"])
                if loc and loc[0] == item.get("type"):
                    loc = loc[1:]
                raise ValueError(format_error({**err, "loc": (key, *loc)})) from None
        return parsed

    @field_validator("trainable")
    @classmethod
    def _trainable_ref(cls, value: str) -> str:
        if value in BUILTIN_TRAINABLE_NAMES or _TRAINABLE_REF.match(value):
            return value
        raise ValueError(
            f"unknown trainable {value!r}; use a built-in "
            f"({', '.join(sorted(BUILTIN_TRAINABLE_NAMES))}) or 'package.module:function'"
        )

    @model_validator(mode="after")
    def _cross_checks(self) -> SweepSpec:
        try:
            check_conditions(self.space, self.search.algorithm)
        except ValueError as exc:
            raise ValueError(f"space.{exc}") from None
        options = self.search.options
        check_objectives(self.objectives, self.metric, self.mode, self.search.algorithm,
                         options.get("sampler"), self.scheduler)  # fmt: skip
        grid_keys = [k for k, v in self.space.items() if isinstance(v, GridParam)]
        if grid_keys and self.search.algorithm not in GRID_ALGORITHMS:
            raise ValueError(
                f"space.{grid_keys[0]}: 'grid' parameters need search.algorithm grid or random "
                f"(got {self.search.algorithm!r}); use 'choice' instead"
            )
        if self.search.algorithm == "grid":
            sampled = [k for k, v in self.space.items() if is_sampled(v) and k not in grid_keys]
            if sampled:
                raise ValueError(
                    f"space.{sampled[0]}: algorithm 'grid' takes only 'grid' parameters and "
                    f"constants (got {type(self.space[sampled[0]]).__name__}); use 'random'"
                )
            if not grid_keys:
                raise ValueError("space: algorithm 'grid' needs at least one 'grid' parameter")
        # Schedulers whose decisions depend on when results arrive or how many trials run;
        # strict ASHA compares a trial only with trials settled before it started
        not_strict = {
            "median": "its median is taken over whatever results have arrived so far",
            "hyperband": "which trials share a bracket milestone depends on how many run at once",
        }
        if self.reproducibility.strict and self.scheduler.type in not_strict:
            raise ValueError(
                f"scheduler.type: {self.scheduler.type!r} is not reproducible in strict mode "
                f"({not_strict[self.scheduler.type]}); use fifo or asha, or set "
                "reproducibility.strict to false and search.max_concurrent to 1"
            )
        return self

    @model_serializer(mode="wrap")
    def _omit_single_objective(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> Any:
        data = handler(self)  # one-metric and Ray specs serialise (and hash) as they always did
        drop = (("objectives", None), ("execution", "ray"), ("rank_by", None))
        return {k: v for k, v in data.items() if (k, v) not in drop} if type(data) is dict else data

    @property
    def objective_pairs(self) -> list[tuple[str, str]]:
        """``[(metric, mode), ...]``: every objective, or the one metric."""
        return objective_pairs(self.objectives, self.metric, self.mode)

    def with_gpus_per_trial(self, gpus: float) -> SweepSpec:
        """A copy whose ``resources.gpus_per_trial`` is ``gpus`` (how "auto" is resolved)."""
        resources = self.resources.model_copy(update={"gpus_requested": float(gpus)})
        return self.model_copy(update={"resources": resources})

    @property
    def grid_size(self) -> int:
        """Number of points in the cross product of the grid parameters (1 if none)."""
        sizes = [len(v.values) for v in self.space.values() if isinstance(v, GridParam)]
        return math.prod(sizes) if sizes else 1

    @property
    def iteration_budget(self) -> int | None:
        """Most iterations a trial may run: the scheduler's max_t and/or stop.max_iterations."""
        limits = [self.stop.max_iterations, getattr(self.scheduler, "max_t", None)]
        present = [int(v) for v in limits if v]
        return min(present) if present else None

    @property
    def total_trials(self) -> int:
        """Trials the sweep runs: num_samples, times the grid size for grid/random."""
        return self.search.num_samples * self.grid_size


def is_sampled(value: Any) -> bool:
    """Whether a space entry is a parameter (not a constant)."""
    from pydantic import BaseModel

    return isinstance(value, BaseModel)
