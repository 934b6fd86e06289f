"""``resources.gpu_sharing``: how trials packed on one GPU share it (no Ray, no NVML here).

"time-slice" (CUDA's default, the default here), "mps" (NVIDIA MPS: enforced compute
and memory shares, exit 2 where unavailable) or "auto" (MPS where available, else
time-slicing with a note); the machine is asked when a run plans its GPUs
(``gpu/sharing.py``). The default is left out of spec.json, so the specs and hashes
of runs written before the field existed do not change.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from raysweep.config.base import StrictModel

DEFAULT_GPU_SHARING = "time-slice"


class GpuSharingField(StrictModel):
    """The ``gpu_sharing`` field of ``resources`` (``ResourcesConfig`` derives from it)."""

    gpu_sharing: Literal["time-slice", "mps", "auto"] = Field(
        default="time-slice",
        description="how trials on one GPU share it: 'time-slice' (CUDA's default), 'mps' "
        "(NVIDIA MPS: enforced compute and memory shares; exit 2 where unavailable) or "
        "'auto' (MPS where available, else time-slicing with a note)",
    )

    @model_validator(mode="after")
    def _mps_needs_gpus(self) -> GpuSharingField:
        if self.gpu_sharing == "mps" and getattr(self, "gpus_requested", None) == 0:
            raise ValueError(
                "gpu_sharing: 'mps' shares GPUs between trials, but gpus_per_trial is 0; "
                "give trials a GPU share or remove gpu_sharing"
            )
        return self

    @model_serializer(mode="wrap")
    def _omit_default_sharing(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> Any:
        data = handler(self)  # time-slicing specs serialise (and hash) as they always did
        if type(data) is dict and data.get("gpu_sharing") == DEFAULT_GPU_SHARING:
            data.pop("gpu_sharing")
        return data
