"""The tests' sweep factory: each base is a sweep its trainable accepts as it is."""

from __future__ import annotations

import pytest

from factories import QUADRATIC, make_sweep, quadratic_sweep, trading_sweep
from raysweep.config.load import parse_spec
from raysweep.trainables.checks import check_trainable


@pytest.mark.parametrize(
    "trainable", [QUADRATIC, "lightgbm", "xgboost", "catboost", "torch_mlp", "trading"]
)
def test_every_base_is_a_valid_sweep_of_its_trainable(trainable: str) -> None:
    spec = parse_spec(make_sweep(trainable))
    assert spec.trainable == trainable
    check_trainable(spec)


def test_fields_replace_top_level_keys_of_a_fresh_copy() -> None:
    data = make_sweep("lightgbm", name="other", seed=3)
    assert (data["name"], data["seed"], data["metric"]) == ("other", 3, "val_loss")
    data["trainable_args"]["num_boost_round"] = 99
    assert make_sweep("lightgbm")["trainable_args"]["num_boost_round"] == 10


def test_the_older_factories_are_make_sweep() -> None:
    assert quadratic_sweep() == make_sweep()
    assert quadratic_sweep(trainable="examples.rng_probe:fit")["metric"] == "loss"
    assert trading_sweep() == make_sweep("trading")
    assert trading_sweep(n_folds=3)["trainable_args"] == {"synthetic": {"bars": 800}, "n_folds": 3}
