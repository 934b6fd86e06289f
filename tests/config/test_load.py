"""Loading files, overrides, hashing and the JSON Schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from raysweep.config.load import apply_overrides, json_schema, load_spec, spec_hash
from raysweep.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        load_spec(tmp_path / "nope.json")


def test_invalid_json_names_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"name": "x",\n "metric": }')
    with pytest.raises(ConfigError, match=r"invalid JSON at line 2"):
        load_spec(path)


def test_top_level_must_be_object(tmp_path: Path) -> None:
    path = tmp_path / "list.json"
    path.write_text("[1, 2]")
    with pytest.raises(ConfigError, match="must be a JSON object"):
        load_spec(path)


def test_overrides_set_nested_values_and_skip_none() -> None:
    data = {"search": {"num_samples": 3}, "seed": 1}
    merged = apply_overrides(data, {"search.num_samples": 9, "seed": None, "search.x.y": 1})
    assert merged == {"search": {"num_samples": 9, "x": {"y": 1}}, "seed": 1}
    assert data == {"search": {"num_samples": 3}, "seed": 1}


def test_hash_changes_with_content() -> None:
    path = REPO / "sweeps" / "demo.json"
    a = load_spec(path)
    b = load_spec(path, {"seed": a.seed + 1})
    assert spec_hash(a) == spec_hash(load_spec(path))
    assert spec_hash(a) != spec_hash(b)


def test_json_schema_describes_the_parameter_dsl() -> None:
    import jsonschema

    schema = json_schema()
    demo = json.loads((REPO / "sweeps" / "demo.json").read_text())
    jsonschema.validate(demo, schema)
    bad = dict(demo, space={"x": {"type": "uniform", "low": 0}})
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)
    assert set(schema["properties"]) >= {"name", "trainable", "space", "search", "scheduler"}
