"""Parameter names: each table against the installed library, suggestions, tiny data shapes."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from raysweep.trainables.params import native_lightgbm
from raysweep.trainables.params.names import (
    CATBOOST_ALIASES,
    XGBOOST_ALIASES,
    did_you_mean,
    name_table,
)
from raysweep.trainables.params.tiny_data import BUNDLED_SHAPES, data_shape, tiny_dataset


def test_lightgbm_table_is_the_python_package_table() -> None:
    """The C API read without ``import lightgbm`` gives what lightgbm.basic gives."""
    from lightgbm.basic import _ConfigAliases

    expected = {k: set(v) - {k} for k, v in _ConfigAliases._get_all_param_aliases().items()}
    assert {k: set(v) for k, v in native_lightgbm.param_aliases().items()} == expected
    table = name_table("lightgbm")
    assert table.complete
    assert table.resolve("num_leaf") == "num_leaves"
    assert table.resolve("min_child_samples") == "min_data_in_leaf"
    assert table.resolve("n_estimators") == "num_iterations"


def test_lightgbm_param_string_follows_the_python_package() -> None:
    from lightgbm.basic import _param_dict_to_str

    params: dict[str, Any] = {"num_leaves": 31, "boosting": "goss", "deterministic": True,
                              "lambda_l2": 0.5, "monotone_constraints": [1, 0, -1]}  # fmt: skip
    assert native_lightgbm.param_string(params) == _param_dict_to_str(params)


def test_lightgbm_one_round_reports_lightgbms_message() -> None:
    x = np.random.default_rng(0).random((20, 2))
    y = np.arange(20) % 2
    native_lightgbm.train_one_round({"objective": "binary", "verbosity": -1}, x, y, ["a", "b"])
    with pytest.raises(
        native_lightgbm.LightGBMError, match=r"^Check failed: \(num_leaves\) > \(1\)$"
    ):
        native_lightgbm.train_one_round({"num_leaves": 1, "verbosity": -1}, x, y, ["a", "b"])


# n_estimators and num_round are raysweep's names for the rounds, not the booster's.
BOOSTER_ALIASES = sorted((a, c) for a, c in XGBOOST_ALIASES.items() if c != "num_boost_round")


@pytest.mark.parametrize(("alias", "canonical"), BOOSTER_ALIASES)
def test_xgboost_aliases_are_xgboosts(alias: str, canonical: str) -> None:
    """Setting the alias sets the canonical parameter in the installed XGBoost's config."""
    import xgboost as xgb

    value = 3 if canonical in ("seed", "nthread") else 0.375
    data = xgb.DMatrix(np.random.default_rng(0).random((16, 2)), label=np.arange(16) % 2)
    with xgb.config_context(verbosity=0):
        booster = xgb.Booster({alias: value}, [data])
        booster.update(data, iteration=0)
    values = _leaves(json.loads(booster.save_config()))
    assert float(values[canonical]) == pytest.approx(value, rel=1e-6)


def _leaves(node: Any, out: dict[str, Any] | None = None) -> dict[str, Any]:
    out = {} if out is None else out
    items = node.items() if isinstance(node, dict) else enumerate(node)
    for key, value in items:
        if isinstance(value, dict | list):
            _leaves(value, out)
        else:
            out.setdefault(str(key), value)
    return out


@pytest.mark.parametrize(("alias", "canonical"), sorted(CATBOOST_ALIASES.items()))
def test_catboost_aliases_are_catboosts(alias: str, canonical: str) -> None:
    """CatBoost's own synonym handling renames the alias to the canonical name."""
    from catboost.core import _process_synonyms

    params = {alias: "x" if alias in ("objective", "custom_loss") else 3}
    _process_synonyms(params)
    assert canonical in params and alias not in params


@pytest.mark.parametrize(
    ("trainable", "typo", "meant"),
    [
        ("lightgbm", "num_leafs", "num_leaves"),
        ("lightgbm", "learning_rat", "learning_rate"),
        ("xgboost", "max_dept", "max_depth"),
        ("xgboost", "colsample_bytre", "colsample_bytree"),
        ("catboost", "depht", "depth"),
        ("catboost", "l2_leaf_regg", "l2_leaf_reg"),
        ("torch_mlp", "hiden_size", "hidden_size"),
        ("torch_mlp", "dropuot", "dropout"),
    ],
)
def test_nearest_name_comes_first(trainable: str, typo: str, meant: str) -> None:
    table = name_table(trainable)
    assert not table.knows(typo)
    assert table.suggest(typo)[0] == meant
    assert did_you_mean(table.suggest(typo)).startswith(f"; did you mean {meant}?")


def test_catboost_and_xgboost_tables_are_the_installed_versions() -> None:
    assert {"depth", "l2_leaf_reg", "grow_policy", "max_leaves"} <= set(
        name_table("catboost").canonical
    )
    assert {"max_depth", "subsample", "colsample_bytree", "rate_drop", "feature_selector"} <= set(
        name_table("xgboost").canonical
    )


@pytest.mark.parametrize("name", sorted(BUNDLED_SHAPES))
def test_bundled_shapes_are_scikit_learns(name: str) -> None:
    from raysweep.trainables.data import load_dataset

    dataset = load_dataset({"dataset": name}, 0)
    shape = data_shape({"dataset": name})
    assert shape.task == dataset.task and shape.n_classes == dataset.n_classes
    assert list(shape.feature_names) == dataset.feature_names


def test_file_shape_reads_header_and_target(tmp_path: Any) -> None:
    path = tmp_path / "d.csv"
    path.write_text("a,b,label\n" + "".join(f"{i},{i * 2},{i % 3}\n" for i in range(30)))
    shape = data_shape({"dataset": str(path), "target": "label"})
    assert (shape.task, shape.n_classes, shape.feature_names) == ("classification", 3, ("a", "b"))
    tiny = tiny_dataset(shape)
    assert tiny.X_train.shape == (48, 2) and set(tiny.y_train) == {0, 1, 2}
