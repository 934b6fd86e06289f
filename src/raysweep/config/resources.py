"""``resources``: what one trial occupies (CPUs, GPUs) and how trials share a GPU."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator

from raysweep.config.sharing import GpuSharingField

AUTO = "auto"  # resources.gpus_per_trial: probe one trial's GPU memory and pack by it


class UnresolvedGpusError(RuntimeError):
    """``gpus_per_trial`` was read from a spec whose ``"auto"`` has not been resolved yet."""


class ResourcesConfig(GpuSharingField):
    """What one trial occupies, and how trials share a GPU (``gpu_sharing``: config/sharing.py)."""

    model_config = ConfigDict(serialize_by_alias=True)

    # a whole number, or a fraction of one CPU for light trials (several share a core;
    # each still runs one thread: ``threads_per_trial``)
    cpus_per_trial: int | float = Field(
        default=1,
        description="a whole number >= 1, or a fraction in (0, 1) for light trials",
    )
    # sweep.json's ``gpus_per_trial`` as written (a number or "auto"); code reads the
    # number through the ``gpus_per_trial`` property, once a run has resolved "auto"
    # (engines/ray/gpu_probe.py) into a copy of the spec.
    gpus_requested: float | Literal["auto"] = Field(
        default=0.0,
        alias="gpus_per_trial",
        description="0, a fraction in (0, 1], a whole number, or 'auto' (a probe of one "
        "trial's GPU memory picks the packing at run time)",
    )

    @field_validator("cpus_per_trial", mode="before")
    @classmethod
    def _cpu_number(cls, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise ValueError(f"must be a number (got {value!r})")
        try:
            return float(value) if isinstance(value, str) else value
        except ValueError:
            raise ValueError(f"must be a number (got {value!r})") from None

    @field_validator("cpus_per_trial")
    @classmethod
    def _cpu_fraction_or_whole(cls, value: float) -> float:
        if not value > 0:
            raise ValueError(f"must be > 0 (got {value!r})")
        if value > 1 and not float(value).is_integer():
            raise ValueError(f"must be a fraction in (0, 1) or a whole number (got {value:g})")
        return int(value) if float(value).is_integer() else value

    @property
    def threads_per_trial(self) -> int:
        """CPU threads a trial may use: its whole CPUs, one when it has a fraction of one."""
        return max(1, int(self.cpus_per_trial))

    @field_validator("gpus_requested", mode="before")
    @classmethod
    def _number_or_auto(cls, value: Any) -> Any:
        if isinstance(value, str) and value != AUTO:
            try:
                float(value)
            except ValueError:
                raise ValueError(f"must be a number or {AUTO!r} (got {value!r})") from None
        elif not isinstance(value, str | int | float):
            raise ValueError(f"must be a number or {AUTO!r} (got {value!r})")
        return value

    @field_validator("gpus_requested")
    @classmethod
    def _fraction_or_whole(cls, value: float | str) -> float | str:
        if isinstance(value, str):
            return value
        if value < 0:
            raise ValueError(f"must be >= 0 or {AUTO!r} (got {value:g})")
        if value > 1 and not float(value).is_integer():
            raise ValueError(f"must be a fraction in (0, 1] or a whole number (got {value})")
        return value

    @property
    def gpus_auto(self) -> bool:
        """Whether the config leaves the packing to the run's GPU probe (``"auto"``)."""
        return self.gpus_requested == AUTO

    @property
    def gpus_per_trial(self) -> float:
        """GPUs per trial; UnresolvedGpusError while it is still ``"auto"``."""
        if isinstance(self.gpus_requested, str):
            raise UnresolvedGpusError(
                "resources.gpus_per_trial is 'auto' and has not been resolved by the GPU probe"
            )
        return float(self.gpus_requested)
