"""check_trainable: GPUs per trial and data-parallel replicas against the trainable."""

from __future__ import annotations

from typing import Any

import pytest

from factories import make_sweep
from raysweep.config.schema import SweepSpec
from raysweep.errors import ConfigError
from raysweep.trainables.checks import check_trainable


def spec(trainable: str, args: dict[str, Any], **resources: Any) -> SweepSpec:
    data = make_sweep(trainable, trainable_args={"dataset": "wine", **args}, space={"lr": 0.01},
                      resources=resources)  # fmt: skip
    return SweepSpec.model_validate(data)


def test_torch_mlp_may_take_several_gpus_the_others_may_not() -> None:
    check_trainable(spec("torch_mlp", {}, gpus_per_trial=2))
    with pytest.raises(ConfigError, match="several GPUs: torch_mlp") as info:
        check_trainable(spec("lightgbm", {}, gpus_per_trial=2))
    assert "'lightgbm' trains on one GPU per trial (got 2)" in str(info.value)


@pytest.mark.parametrize(
    ("replicas", "resources", "error"),
    [
        (2, {"cpus_per_trial": 2}, None),
        (2, {"gpus_per_trial": 2}, None),
        (1, {"gpus_per_trial": 0.5}, None),
        (
            3,
            {"cpus_per_trial": 2},
            "3 CPU replicas need a CPU each",
        ),
        (2, {"gpus_per_trial": 4}, "2 does not match resources.gpus_per_trial 4"),
        (2, {"gpus_per_trial": 1}, "need 2 whole GPUs per trial (got resources.gpus_per_trial 1)"),
        (2, {"gpus_per_trial": "auto"}, "resources.gpus_per_trial is 'auto'"),
        (0, {}, "data_parallel: must be a positive integer (got 0)"),
    ],
)
def test_data_parallel_must_fit_the_trial(
    replicas: int, resources: dict[str, Any], error: str | None
) -> None:
    config = spec("torch_mlp", {"data_parallel": replicas}, **resources)
    if error is None:
        check_trainable(config)
        return
    with pytest.raises(ConfigError) as info:
        check_trainable(config)
    assert str(info.value).startswith("trainable_args.data_parallel: ")
    assert error in str(info.value)


def test_data_parallel_is_torch_mlp_only() -> None:
    with pytest.raises(ConfigError, match=r"trainable_args\.data_parallel: unknown argument"):
        check_trainable(spec("xgboost", {"data_parallel": 2}, cpus_per_trial=2))
