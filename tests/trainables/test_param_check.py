"""The parameter check of built-in trainables: owned keys, unknown names, values, aliases.

Everything here goes through the real libraries' own validation (no Ray).
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

from factories import make_sweep
from raysweep._imports import MissingExtraError
from raysweep.config.load import parse_spec, spec_to_json
from raysweep.config.schema import SweepSpec
from raysweep.errors import ConfigError
from raysweep.trainables.checks import check_trainable
from raysweep.trainables.params.corners import corners

GBM_ARGS = {"dataset": "breast_cancer", "num_boost_round": 10}
TORCH_ARGS = {"dataset": "wine", "epochs": 3}


def load(trainable: str, space: dict[str, Any], args: dict[str, Any] | None = None) -> SweepSpec:
    """A spec as ``sweep validate`` loads it, then checked as it checks it."""
    default = TORCH_ARGS if trainable == "torch_mlp" else GBM_ARGS
    spec = parse_spec(make_sweep(trainable, trainable_args=args or default, space=space))
    check_trainable(spec)
    return spec


def refused(trainable: str, space: dict[str, Any], args: dict[str, Any] | None = None) -> str:
    with pytest.raises(ConfigError) as info:
        load(trainable, space, args)
    return str(info.value)


INT = {"type": "int", "low": 2, "high": 6}


@pytest.mark.parametrize(
    ("trainable", "space", "expected"),
    [
        ("lightgbm", {"num_leafs": 7}, "space.num_leafs: unknown LightGBM parameter; "
         "did you mean num_leaves?"),
        ("lightgbm", {"learning_rat": 0.1}, "did you mean learning_rate?"),
        ("xgboost", {"max_dept": 3}, "space.max_dept: unknown XGBoost parameter (XGBoost "
         "ignores it); did you mean max_depth?"),
        ("xgboost", {"max_dept": INT}, "space.max_dept: unknown XGBoost parameter"),
        ("catboost", {"depht": 3}, "space.depht: unknown CatBoost parameter; did you mean "
         "depth? (CatBoost: Unknown option {depht}"),
        ("catboost", {"depht": INT}, "space.depht: unknown CatBoost parameter"),
        ("torch_mlp", {"hiden_size": 4}, "space.hiden_size: unknown torch_mlp parameter; "
         "did you mean hidden_size?"),
        ("torch_mlp", {"hiden_size": {"type": "choice", "values": [8, 16]}}, "hidden_size"),
    ],
)  # fmt: skip
def test_unknown_names_are_refused_with_the_nearest(
    trainable: str, space: dict[str, Any], expected: str
) -> None:
    assert expected in refused(trainable, space)


@pytest.mark.parametrize(
    ("trainable", "key", "source"),
    [
        ("lightgbm", "seed", 'change the top-level "seed"'),
        ("lightgbm", "random_state", 'change the top-level "seed"'),
        ("lightgbm", "bagging_seed", 'change the top-level "seed"'),
        ("lightgbm", "num_threads", "resources.cpus_per_trial"),
        ("lightgbm", "nthread", "resources.cpus_per_trial"),
        ("lightgbm", "device_type", "resources.gpus_per_trial"),
        ("lightgbm", "deterministic", "reproducibility.deterministic"),
        ("lightgbm", "metric", 'the top-level "metric"'),
        ("lightgbm", "num_iterations", "trainable_args.num_boost_round sets"),
        ("lightgbm", "n_estimators", "trainable_args.num_boost_round sets"),
        ("xgboost", "seed", 'change the top-level "seed"'),
        ("xgboost", "random_state", 'change the top-level "seed"'),
        ("xgboost", "nthread", "resources.cpus_per_trial"),
        ("xgboost", "n_jobs", "resources.cpus_per_trial"),
        ("xgboost", "device", "resources.gpus_per_trial"),
        ("xgboost", "num_boost_round", "trainable_args.num_boost_round sets"),
        ("catboost", "random_seed", 'change the top-level "seed"'),
        ("catboost", "thread_count", "resources.cpus_per_trial"),
        ("catboost", "task_type", "resources.gpus_per_trial"),
        ("catboost", "eval_metric", 'the top-level "metric"'),
        ("catboost", "iterations", "trainable_args.num_boost_round sets"),
        ("torch_mlp", "epochs", "trainable_args.epochs sets the number of epochs"),
    ],
)
def test_keys_raysweep_owns_are_refused_with_their_source(
    trainable: str, key: str, source: str
) -> None:
    for value in (7, {"type": "int", "low": 2, "high": 6}):
        message = refused(trainable, {key: value})
        assert message.startswith(f"space.{key}: not a parameter to set here: ")
        assert source in message


def test_rounds_are_tunable_when_trainable_args_leaves_them_out() -> None:
    spec = load("lightgbm", {"num_iterations": {"type": "int", "low": 5, "high": 20}},
                {"dataset": "breast_cancer"})  # fmt: skip
    assert "num_iterations" in spec.space
    load("torch_mlp", {"epochs": {"type": "int", "low": 1, "high": 3}}, {"dataset": "wine"})


@pytest.mark.parametrize(
    ("trainable", "space", "expected"),
    [
        ("lightgbm", {"num_leaves": {"type": "int", "low": -5, "high": 1}},
         "space.num_leaves: LightGBM refuses num_leaves=-5 (the low end of its range): "
         "Check failed: (num_leaves) > (1)"),
        ("lightgbm", {"feature_fraction": {"type": "uniform", "low": 0.5, "high": 1.5}},
         "space.feature_fraction: LightGBM refuses feature_fraction=1.5 (the high end of its "
         "range): Check failed: (feature_fraction) <= (1.0)"),
        ("lightgbm", {"boosting": {"type": "choice", "values": ["gbdt", "gbdtx"]}},
         'LightGBM refuses boosting="gbdtx": Unknown boosting type gbdtx'),
        ("lightgbm", {"objective": "multiclass"}, 'space.objective: LightGBM refuses '
         'objective="multiclass"'),
        ("xgboost", {"max_depth": {"type": "int", "low": -1, "high": 4}},
         "XGBoost refuses max_depth=-1 (the low end of its range): value -1 for Parameter "
         "max_depth should be greater equal to 0"),
        ("xgboost", {"subsample": {"type": "grid", "values": [0.5, 2.0]}},
         "XGBoost refuses subsample=2.0: value 2 for Parameter subsample exceed bound [0,1]"),
        ("catboost", {"depth": {"type": "int", "low": 4, "high": 20}},
         "CatBoost refuses depth=20 (the high end of its range): Maximum tree depth is 16"),
        ("catboost", {"l2_leaf_reg": -1.0},
         "space.l2_leaf_reg: CatBoost refuses l2_leaf_reg=-1.0: L2LeafRegularizer should be >= 0"),
        ("torch_mlp", {"dropout": {"type": "uniform", "low": 0.0, "high": 1.5}},
         "torch_mlp refuses dropout=1.5 (the high end of its range): invalid dropout"),
        ("torch_mlp", {"optimizer": {"type": "choice", "values": ["adam", "lbfgs"]}},
         'torch_mlp refuses optimizer="lbfgs": invalid optimizer'),
    ],
)  # fmt: skip
def test_impossible_values_quote_the_library(
    trainable: str, space: dict[str, Any], expected: str
) -> None:
    assert expected in refused(trainable, space)


def test_a_value_valid_with_another_parameter_is_kept() -> None:
    """max_leaves works with grow_policy Lossguide only: an interaction, not an error."""
    load("catboost", {
        "grow_policy": {"type": "choice", "values": ["SymmetricTree", "Lossguide"]},
        "max_leaves": {"type": "int", "low": 8, "high": 32},
    })  # fmt: skip
    message = refused("catboost", {"grow_policy": "SymmetricTree", "max_leaves": INT})
    assert "space.max_leaves: CatBoost refuses max_leaves=2" in message
    assert "max_leaves option works only with lossguide tree growing" in message


def test_a_parameter_the_library_ignores_is_refused() -> None:
    message = refused("xgboost", {"booster": "gblinear", "max_depth": INT})
    assert message == (
        "space.max_depth: XGBoost does not use this parameter with these settings "
        "(it would be ignored)"
    )
    load("xgboost", {"booster": {"type": "choice", "values": ["gblinear", "gbtree"]},
                     "max_depth": INT})  # fmt: skip


def test_the_dataset_shape_counts() -> None:
    """The tiny data has the real number of features and classes."""
    load("lightgbm", {"monotone_constraints": [0] * 30})
    assert "monotone_constraints" in refused("lightgbm", {"monotone_constraints": [0] * 3})
    wine = {"dataset": "wine", "num_boost_round": 5}
    load("catboost", {"class_weights": [1.0, 2.0, 3.0]}, wine)
    assert "class_weights" in refused("catboost", {"class_weights": [1.0, 2.0]}, wine)


def test_aliases_resolve_to_canonical_names_in_the_spec() -> None:
    cases = {
        "lightgbm": ({"num_leaf": INT, "min_child_samples": 5, "eta": 0.1},
                     ["num_leaves", "min_data_in_leaf", "learning_rate"]),
        "xgboost": ({"eta": 0.1, "lambda": 1.0, "max_depth": INT},
                    ["learning_rate", "reg_lambda", "max_depth"]),
        "catboost": ({"max_depth": INT, "eta": 0.1, "reg_lambda": 3.0},
                     ["depth", "learning_rate", "l2_leaf_reg"]),
    }  # fmt: skip
    for trainable, (space, names) in cases.items():
        assert list(spec_to_json(load(trainable, space))["space"]) == names


def test_two_names_for_one_parameter_are_refused() -> None:
    with pytest.raises(ConfigError, match=r"space\.num_leaves: the same lightgbm parameter as "
                       r"space\.num_leaf \(num_leaves\); keep one"):  # fmt: skip
        load("lightgbm", {"num_leaf": 4, "num_leaves": 5})


def test_user_trainables_are_not_touched() -> None:
    spec = parse_spec(make_sweep(space={"num_leaf": 1, "seed": 2}))
    assert list(spec.space) == ["num_leaf", "seed"]


def test_a_missing_extra_exits_2_naming_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # what Python does for a blocked import
    with pytest.raises(MissingExtraError) as info:
        load("torch_mlp", {"lr": 0.01})
    assert info.value.exit_code == 2
    assert str(info.value) == (
        "trainable 'torch_mlp' needs torch, which is not installed; install it with: "
        "pip install 'raysweep[torch]'"
    )


def test_corners_are_what_the_searchers_can_produce() -> None:
    spec = parse_spec(make_sweep("torch_mlp", space={
        "a": {"type": "uniform", "low": 0.0, "high": 1.0},
        "b": {"type": "int", "low": 5, "high": 50, "step": 10},
        "c": {"type": "quniform", "low": 0.0, "high": 0.5, "q": 0.2},
        "d": {"type": "choice", "values": [1, 1, "x"]},
    }))  # fmt: skip
    found = {k: [(c.value, c.where) for c in corners(v)] for k, v in spec.space.items()}
    assert found["a"][0] == (0.0, "low") and 0.99 < found["a"][1][0] < 1.0
    assert found["b"] == [(5, "low"), (45, "high")]
    assert found["c"] == [(0.0, "low"), (pytest.approx(0.4), "high")]
    assert found["d"] == [(1, "value"), ("x", "value")]
