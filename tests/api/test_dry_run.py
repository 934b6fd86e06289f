"""``sweep run --dry-run``'s plan: what each trial gets, data-parallel replicas included."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from factories import make_sweep
from raysweep import api
from raysweep.config.load import parse_spec
from raysweep.gpu.allocation import GPUPlan


def plan_text(tmp_path: Path, plan: GPUPlan, trainable: str = "torch_mlp", **extra: Any) -> str:
    resources = extra.pop("resources", {})
    args = {"dataset": "wine", **extra}
    search = {"algorithm": "random", "num_samples": 2}
    spec = parse_spec(make_sweep(trainable, name="plan", trainable_args=args, space={"lr": 0.01},
                                 search=search, resources=resources))  # fmt: skip
    return api._dry_run_text(spec, tmp_path / "plan", plan).splitlines()[3]


ON_GPUS = GPUPlan((0, 1, 2, 3), 4, False)
NO_GPU = GPUPlan((), 0, True)


@pytest.mark.parametrize(
    ("trainable", "extra", "plan", "line"),
    [
        ("lightgbm", {}, NO_GPU, "per trial: 1 CPU(s), 0 GPU(s)"),
        ("torch_mlp", {"resources": {"gpus_per_trial": 0.25}}, ON_GPUS,
         "per trial: 1 CPU(s), 0.25 GPU(s)"),
        ("torch_mlp", {"resources": {"gpus_per_trial": 2, "cpus_per_trial": 4}}, ON_GPUS,
         "per trial: 4 CPU(s), 2 GPU(s), 2 data-parallel replicas (one per GPU)"),
        ("torch_mlp", {"data_parallel": 2, "resources": {"cpus_per_trial": 2}}, NO_GPU,
         "per trial: 2 CPU(s), 0 GPU(s), 2 data-parallel replicas (CPU)"),
        ("torch_mlp", {"resources": {"gpus_per_trial": 2}}, NO_GPU,
         "per trial: 1 CPU(s), 0 GPU(s) (no GPU: --allow-cpu runs the trials on CPUs)"),
    ],
)  # fmt: skip
def test_dry_run_says_what_each_trial_gets(
    tmp_path: Path, trainable: str, extra: dict[str, Any], plan: GPUPlan, line: str
) -> None:
    assert plan_text(tmp_path, plan, trainable, **extra) == line
    assert not (tmp_path / "plan").exists()
