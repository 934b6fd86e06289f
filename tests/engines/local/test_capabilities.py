"""What the local engine runs, checked by the engine (``check_options``), not the config:
a spec it cannot run is a ConfigError naming the field, under ``sweep validate``, ``sweep
run`` and ``sweep resume`` alike."""

from __future__ import annotations

from typing import Any

import pytest

from factories import make_sweep
from raysweep.config.load import parse_spec
from raysweep.engines.base import EngineOptions
from raysweep.engines.registry import engine_for
from raysweep.errors import ConfigError

# no trainable_args: the other trainables swapped in below would not take LightGBM's
LOCAL: dict[str, Any] = make_sweep("lightgbm", name="t", trainable_args={}, execution="local")


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"trainable": "torch_mlp"}, "only (got trainable 'torch_mlp')"),
        ({"trainable": "examples.quadratic:fit"}, "got trainable 'examples.quadratic:fit'"),
        ({"resources": {"gpus_per_trial": 0.5}}, "CPUs only (got resources.gpus_per_trial 0.5)"),
        ({"resources": {"gpus_per_trial": "auto"}}, "gpus_per_trial 'auto'"),
        ({"scheduler": {"type": "hyperband"}}, "got scheduler.type 'hyperband'"),
        ({"logging": {"tensorboard": True}}, "no TensorBoard or MLflow logs"),
    ],
)
def test_the_local_engine_refuses_what_it_cannot_run(
    changes: dict[str, Any], expected: str
) -> None:
    spec = parse_spec({**LOCAL, **changes})  # a valid sweep config: Ray runs it
    with pytest.raises(ConfigError) as info:
        engine_for(spec).check_options(spec, EngineOptions())
    assert "execution: 'local'" in str(info.value)
    assert expected in str(info.value)


def test_a_spec_it_can_run_passes() -> None:
    spec = parse_spec(LOCAL)
    engine_for(spec).check_options(spec, EngineOptions())
