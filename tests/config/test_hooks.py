"""Space hooks: how trainables rewrite a space as sweep.json loads, with config importing none."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

import raysweep.config
from factories import make_sweep
from raysweep.config.hooks import apply_space_hooks, register_space_hook, unregister_space_hook
from raysweep.config.load import parse_spec
from raysweep.errors import ConfigError

DATA: dict[str, Any] = make_sweep(space={"x": {"type": "uniform", "low": 0, "high": 1}, "steps": 3})


def upper_steps(trainable: str, space: Mapping[str, Any]) -> dict[str, Any]:
    if "bad" in space:
        raise ValueError("space.bad: not allowed here")
    return {("STEPS" if k == "steps" else k): v for k, v in space.items()}


@pytest.fixture
def hook() -> Iterator[None]:
    register_space_hook(upper_steps)
    register_space_hook(upper_steps)  # once only
    yield
    unregister_space_hook(upper_steps)


def test_parse_spec_applies_the_hooks(hook: None) -> None:
    spec = parse_spec(DATA)
    assert list(spec.space) == ["x", "STEPS"]
    assert DATA["space"]["steps"] == 3  # the caller's data is not modified


def test_a_hooks_value_error_is_a_config_error(hook: None) -> None:
    with pytest.raises(ConfigError, match=r"^f.json: invalid sweep config\n  space\.bad: not"):
        parse_spec({**DATA, "space": {"bad": 1}}, source="f.json")


def test_malformed_data_is_left_for_the_schema(hook: None) -> None:
    assert apply_space_hooks({"space": []}) == {"space": []}
    assert apply_space_hooks({"trainable": 3, "space": {"steps": 1}})["space"] == {"steps": 1}
    with pytest.raises(ConfigError, match="space: must be a non-empty object"):
        parse_spec({**DATA, "space": []})


def test_importing_the_trainables_registers_their_hook() -> None:
    """The orchestrator imports raysweep.trainables (its checks) before it loads sweep.json."""
    import raysweep.trainables  # noqa: F401

    spec = parse_spec(make_sweep("torch_mlp", space={"lr": 0.1}))
    assert list(spec.space) == ["lr"]
    spec = parse_spec(make_sweep("xgboost", space={"eta": 0.1}))
    assert list(spec.space) == ["learning_rate"]


def test_config_imports_no_trainables() -> None:
    """The dependency runs one way: trainables -> config (function-level imports included)."""
    root = Path(raysweep.config.__file__).parent
    for path in root.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            assert not any(n.startswith("raysweep.trainables") for n in names), path.name
