"""The parameter names each built-in trainable accepts, their aliases, and "did you mean".

* LightGBM: its own table of every parameter and alias (``LGBM_DumpParamAliases``
  of the installed library): complete, so any other name is unknown.
* XGBoost: its C++ parameters do not come as a list; the names of the installed
  version's configuration (``Booster.save_config``, for each booster) feed the
  suggestions, and XGBoost itself decides which keys are unknown ("Parameters:
  { ... } are not used", seen when the values are checked).
* CatBoost: the parameters of its scikit-learn classes (``CatBoostClassifier``,
  ``CatBoostRegressor``, ``CatBoostRanker``) of the installed version; a name
  outside them is confirmed unknown by CatBoost's own "Unknown option" before it
  is refused.
* torch_mlp: its hyperparameters.

Aliases resolve to the library's canonical name. XGBoost's and CatBoost's alias
lists (``XGBOOST_ALIASES``, ``CATBOOST_ALIASES``) are not published by the
libraries; tests check them against the installed versions.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

# Number of boosting rounds: raysweep takes it from trainable_args.num_boost_round
# or from these keys (then it is not passed to the library as such).
ROUNDS_CANONICAL: dict[str, str] = {
    "lightgbm": "num_iterations",
    "xgboost": "num_boost_round",
    "catboost": "iterations",
    "torch_mlp": "epochs",
}
ROUNDS_ARG: dict[str, str] = {
    "lightgbm": "num_boost_round",
    "xgboost": "num_boost_round",
    "catboost": "num_boost_round",
    "torch_mlp": "epochs",
}
XGBOOST_ALIASES: dict[str, str] = {
    "eta": "learning_rate",
    "gamma": "min_split_loss",
    "lambda": "reg_lambda",
    "alpha": "reg_alpha",
    "random_state": "seed",
    "n_jobs": "nthread",
    # raysweep's names for the number of rounds (XGBoost's Python API takes it apart)
    "n_estimators": "num_boost_round",
    "num_round": "num_boost_round",
}
CATBOOST_ALIASES: dict[str, str] = {
    "eta": "learning_rate",
    "max_bin": "border_count",
    "max_depth": "depth",
    "colsample_bylevel": "rsm",
    "random_state": "random_seed",
    "reg_lambda": "l2_leaf_reg",
    "n_estimators": "iterations",
    "num_boost_round": "iterations",
    "num_trees": "iterations",
    "early_stopping_rounds": "od_wait",
    "custom_loss": "custom_metric",
    "num_leaves": "max_leaves",
    "min_child_samples": "min_data_in_leaf",
    "objective": "loss_function",
}
LIBRARY_LABELS: dict[str, str] = {
    "lightgbm": "LightGBM",
    "xgboost": "XGBoost",
    "catboost": "CatBoost",
    "torch_mlp": "torch_mlp",
}
# The built-ins whose whole space is their library's parameters (checked by params.check).
CHECKED_TRAINABLES: tuple[str, ...] = tuple(LIBRARY_LABELS)


@dataclass(frozen=True)
class NameTable:
    """Accepted names of one trainable's parameters.

    ``canonical`` maps every known name and alias to the canonical name;
    ``complete`` says whether a name outside it is unknown for sure (otherwise
    the library's own check has the last word).
    """

    label: str
    canonical: Mapping[str, str]
    complete: bool
    extra: frozenset[str] = field(default=frozenset())  # aliases only (not suggested)

    def resolve(self, name: str) -> str:
        """The canonical name of ``name`` (itself when it is not an alias)."""
        return self.canonical.get(name, name)

    def knows(self, name: str) -> bool:
        return name in self.canonical

    def suggest(self, name: str, limit: int = 3) -> list[str]:
        """The nearest valid names (canonical ones), best first."""
        return nearest(name, self.canonical, limit)


def nearest(name: str, names: Iterable[str] | Mapping[str, str], limit: int = 3) -> list[str]:
    """Up to ``limit`` names close to ``name`` (difflib), canonical names when a mapping."""
    mapping = names if isinstance(names, Mapping) else {n: n for n in names}
    out: list[str] = []
    for match in difflib.get_close_matches(name, list(mapping), n=limit * 3, cutoff=0.6):
        canonical = mapping[match]
        if canonical not in out:
            out.append(canonical)
    return out[:limit]


def did_you_mean(suggestions: list[str]) -> str:
    """The "; did you mean num_leaves?" hint for ``suggestions`` (empty without any)."""
    if not suggestions:
        return ""
    if len(suggestions) == 1:
        return f"; did you mean {suggestions[0]}?"
    return f"; did you mean {suggestions[0]}? (or {', '.join(suggestions[1:])})"


def alias_table(trainable: str) -> dict[str, str] | None:
    """name/alias -> canonical without importing the library; None when it is not installed."""
    if trainable == "lightgbm":
        try:
            return _lightgbm_aliases()
        except (ImportError, OSError):
            return None
    if trainable == "xgboost":
        return dict(XGBOOST_ALIASES)
    if trainable == "catboost":
        return dict(CATBOOST_ALIASES)
    return {}


def name_table(trainable: str) -> NameTable:
    """The full table of ``trainable``'s names (imports the library; ImportError when absent)."""
    if trainable not in CHECKED_TRAINABLES:
        raise ValueError(f"no parameter table for trainable {trainable!r}")
    return _name_table(trainable)


@functools.cache
def _name_table(trainable: str) -> NameTable:
    label = LIBRARY_LABELS[trainable]
    if trainable == "lightgbm":
        return NameTable(label, _lightgbm_aliases(), complete=True)
    if trainable == "xgboost":
        names = {n: n for n in xgboost_config_names()}
        names.update({"num_boost_round": "num_boost_round", **XGBOOST_ALIASES})
        return NameTable(label, names, complete=False)
    if trainable == "catboost":
        names = {n: n for n in _catboost_names()}
        names.update(CATBOOST_ALIASES)
        return NameTable(label, names, complete=False)
    from raysweep.trainables.torch_mlp import DEFAULTS

    return NameTable(label, {n: n for n in [*DEFAULTS, "epochs"]}, complete=True)


@functools.cache
def _lightgbm_aliases() -> dict[str, str]:
    from raysweep.trainables.params.native_lightgbm import param_aliases

    out: dict[str, str] = {}
    for canonical, aliases in param_aliases().items():
        out[canonical] = canonical
        out.update(dict.fromkeys(aliases, canonical))
    return out


def _catboost_names() -> set[str]:
    import inspect

    from catboost import CatBoostClassifier, CatBoostRanker, CatBoostRegressor

    names: set[str] = set()
    for cls in (CatBoostClassifier, CatBoostRegressor, CatBoostRanker):
        names |= set(inspect.signature(cls.__init__).parameters) - {"self"}
    return names


def xgboost_config_names() -> set[str]:
    """Parameter names in the installed XGBoost's configuration, for each kind of booster."""
    import json

    import numpy as np
    import xgboost as xgb

    rng = np.random.default_rng(0)
    data = xgb.DMatrix(rng.random((16, 2)), label=rng.random(16))
    names: set[str] = set()
    for booster in ("gbtree", "dart", "gblinear"):
        with xgb.config_context(verbosity=0):  # XGBoost's verbosity is global: set it locally
            trained = xgb.train({"booster": booster, "nthread": 1}, data, num_boost_round=1)
        names |= _leaf_keys(json.loads(trained.save_config()))
    return names - _XGBOOST_CONFIG_INTERNALS


_XGBOOST_CONFIG_INTERNALS = frozenset(
    {"name", "version", "num_feature", "num_target", "num_trees", "updater_seq",
     "specified_updater"}
)  # fmt: skip


def _leaf_keys(node: object) -> set[str]:
    if isinstance(node, list):
        return set().union(*(_leaf_keys(item) for item in node)) if node else set()
    if not isinstance(node, dict):
        return set()
    out: set[str] = set()
    for key, value in node.items():
        out |= _leaf_keys(value) if isinstance(value, dict | list) else {key}
    return out
