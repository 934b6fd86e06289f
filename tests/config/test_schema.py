"""Config models: every class of bad input names its field and the bad value."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from raysweep.config.load import format_error, json_schema, parse_spec, spec_to_json
from raysweep.config.resources import UnresolvedGpusError
from raysweep.config.space import GridParam, IntParam
from raysweep.errors import ConfigError

BASE: dict[str, Any] = {
    "name": "t",
    "trainable": "lightgbm",
    "metric": "val_loss",
    "mode": "min",
    "space": {
        "learning_rate": {"type": "loguniform", "low": 0.001, "high": 0.3},
        "num_leaves": {"type": "int", "low": 8, "high": 256, "log": True},
        "objective": "binary",
    },
    "search": {"algorithm": "optuna", "num_samples": 4},
}


def with_(path: str, value: Any) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    node = data
    *parents, leaf = path.split(".")
    for part in parents:
        node = node.setdefault(part, {})
    node[leaf] = value
    return data


def error_of(data: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as info:
        parse_spec(data)
    return str(info.value)


def test_valid_config_fills_defaults() -> None:
    spec = parse_spec(BASE)
    assert spec.seed == 0
    assert spec.scheduler.type == "fifo"
    assert spec.search.options == {
        "sampler": "tpe",
        "n_startup_trials": 10,
        "multivariate": True,
        "constant_liar": True,
        "group": False,
    }
    assert isinstance(spec.space["num_leaves"], IntParam)
    assert spec.space["objective"] == "binary"
    assert spec.total_trials == 4


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        (
            "space.num_leaves",
            {"type": "int", "low": 300, "high": 256},
            "space.num_leaves.low: must be < high (got 300 >= 256)",
        ),
        (
            "space.learning_rate",
            {"type": "loguniform", "low": 0, "high": 1},
            "space.learning_rate.low: must be > 0 for a loguniform parameter (got 0.0)",
        ),
        (
            "space.n",
            {"type": "int", "low": 1, "high": 9, "step": 0},
            "space.n.step: must be >= 1 (got 0)",
        ),
        ("space.q", {"type": "quniform", "low": 0, "high": 1, "q": -1}, "space.q.q: must be > 0"),
        ("space.c", {"type": "choice", "values": []}, "space.c.values"),
        (
            "space.g",
            {"type": "grid", "values": [1, 2]},
            "space.g: 'grid' parameters need search.algorithm grid or random (got 'optuna')",
        ),
        ("space.u", {"type": "gaussian", "mu": 0}, "space.u"),
        ("search.num_samples", 0, "search.num_samples: Input should be greater than or equal to 1"),
        ("mode", "minimize", "mode: Input should be 'min' or 'max' (got \"minimize\")"),
        (
            "resources.gpus_per_trial",
            1.5,
            "resources.gpus_per_trial: must be a fraction in (0, 1] or a whole number (got 1.5)",
        ),
        ("resources.gpus_per_trial", -1, "resources.gpus_per_trial"),
        (
            "resources.cpus_per_trial",
            1.5,
            "resources.cpus_per_trial: must be a fraction in (0, 1) or a whole number (got 1.5)",
        ),
        ("resources.cpus_per_trial", 0, "resources.cpus_per_trial: must be > 0 (got 0)"),
        (
            "resources.cpus_per_trial",
            "one",
            "resources.cpus_per_trial: must be a number (got 'one')",
        ),
        (
            "resources.gpus_per_trial",
            "half",
            "resources.gpus_per_trial: must be a number or 'auto' (got 'half')",
        ),
        (
            "resources.gpus_per_trial",
            "AUTO",
            "resources.gpus_per_trial: must be a number or 'auto' (got 'AUTO')",
        ),
        (
            "resources.gpus_per_trial",
            [0.5],
            "resources.gpus_per_trial: must be a number or 'auto' (got [0.5])",
        ),
        (
            "resources.gpus",
            1,
            "resources.gpus: unknown key; valid keys: cpus_per_trial, gpu_sharing, gpus_per_trial",
        ),
        ("search.algorithm", "bayes", "search.algorithm: Input should be 'grid', 'random'"),
        (
            "search.options",
            {"sampler": "tpe", "n_trees": 3},
            "search.options.n_trees: unknown option for algorithm 'optuna'; valid options: "
            "constant_liar, group, multivariate, n_startup_trials, sampler",
        ),
        ("search.options", {"sampler": "nsga"}, "search.options.sampler"),
        (
            "scheduler",
            {"type": "asha", "max_t": 10, "grace_period": 20},
            "scheduler.grace_period: must be <= max_t (got 20 > 10)",
        ),
        ("scheduler", {"type": "pbt"}, "scheduler"),
        ("scheduler", {"type": "asha", "max_tt": 3}, "scheduler.max_tt: unknown key; valid keys"),
        ("trainable", "no_such_trainable", "trainable: unknown trainable 'no_such_trainable'"),
        ("colour", "blue", "colour: unknown key; valid keys:"),
        ("name", "bad name/../x", "name: String should match pattern"),
    ],
)
def test_bad_input_names_field_and_value(path: str, value: Any, expected: str) -> None:
    assert expected in error_of(with_(path, value))


def test_int_log_with_step_is_refused() -> None:
    msg = error_of(with_("space.n", {"type": "int", "low": 1, "high": 64, "log": True, "step": 2}))
    assert "space.n.step: a log-scaled int cannot have a step (got 2)" in msg


def test_grid_algorithm_needs_grid_parameters() -> None:
    data = with_("search", {"algorithm": "grid"})
    assert "space.learning_rate: algorithm 'grid' takes only 'grid' parameters" in error_of(data)


def test_grid_size_multiplies_num_samples() -> None:
    data = copy.deepcopy(BASE)
    data["space"] = {
        "a": {"type": "grid", "values": [1, 2, 3]},
        "b": {"type": "grid", "values": ["x", "y"]},
        "c": 5,
    }
    data["search"] = {"algorithm": "grid", "num_samples": 2}
    spec = parse_spec(data)
    assert isinstance(spec.space["a"], GridParam)
    assert spec.grid_size == 6
    assert spec.total_trials == 12


def test_every_error_is_reported_at_once() -> None:
    data = with_("mode", "up")
    data["search"]["num_samples"] = 0
    msg = error_of(data)
    assert "mode:" in msg and "search.num_samples:" in msg


def test_format_error_strips_union_tags() -> None:
    err = {
        "loc": ("space", "x", "int", "low"),
        "msg": "Input should be a valid integer",
        "type": "int_parsing",
        "input": "a",
    }
    assert format_error(err) == 'space.x.low: Input should be a valid integer (got "a")'


def test_spec_is_frozen() -> None:
    spec = parse_spec(BASE)
    with pytest.raises(Exception, match="frozen"):
        spec.seed = 3  # type: ignore[misc]


def test_gpus_per_trial_auto_is_kept_as_written_until_resolved() -> None:
    spec = parse_spec(with_("resources", {"gpus_per_trial": "auto"}))
    assert spec.resources.gpus_auto
    assert spec_to_json(spec)["resources"] == {"cpus_per_trial": 1, "gpus_per_trial": "auto"}
    with pytest.raises(UnresolvedGpusError, match="'auto' and has not been resolved"):
        _ = spec.resources.gpus_per_trial
    resolved = spec.with_gpus_per_trial(0.125)
    assert resolved.resources.gpus_per_trial == 0.125 and not resolved.resources.gpus_auto
    assert spec_to_json(resolved)["resources"]["gpus_per_trial"] == 0.125
    assert spec.resources.gpus_auto  # the original is unchanged
    assert parse_spec(spec_to_json(spec)) == spec  # spec.json round-trips


def test_a_fraction_of_a_cpu_is_kept_and_runs_one_thread() -> None:
    spec = parse_spec(with_("resources", {"cpus_per_trial": 0.25}))
    assert spec.resources.cpus_per_trial == 0.25 and spec.resources.threads_per_trial == 1
    assert spec_to_json(spec)["resources"]["cpus_per_trial"] == 0.25
    whole = parse_spec(with_("resources", {"cpus_per_trial": 2.0}))
    assert whole.resources.threads_per_trial == 2
    # a whole number stays an int, so spec.json (and its hash) reads as before
    assert spec_to_json(whole)["resources"]["cpus_per_trial"] == 2
    assert isinstance(spec_to_json(parse_spec(BASE))["resources"]["cpus_per_trial"], int)


def test_gpus_per_trial_number_is_unchanged() -> None:
    spec = parse_spec(with_("resources", {"gpus_per_trial": 0.25}))
    assert spec.resources.gpus_per_trial == 0.25 and not spec.resources.gpus_auto
    assert parse_spec(BASE).resources.gpus_per_trial == 0.0


def test_schema_offers_auto() -> None:
    prop = json_schema()["$defs"]["ResourcesConfig"]["properties"]["gpus_per_trial"]
    assert {"const": "auto", "type": "string"} in prop["anyOf"]
    assert {"type": "number"} in prop["anyOf"]


def test_execution_is_ray_or_local() -> None:
    assert "execution" in error_of(with_("execution", "threads"))
    assert parse_spec(BASE).execution == "ray"
    assert parse_spec(with_("execution", "local")).execution == "local"


def test_the_default_execution_leaves_spec_json_and_its_hash_as_before() -> None:
    assert "execution" not in spec_to_json(parse_spec(BASE))
    assert spec_to_json(parse_spec(with_("execution", "local")))["execution"] == "local"
