"""Load sweep.json, apply command-line overrides, and explain every error by field path."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from raysweep.config.base import format_error
from raysweep.config.hooks import apply_space_hooks
from raysweep.config.schema import SweepSpec
from raysweep.config.search_defaults import given_options, with_new_defaults
from raysweep.config.space import Param
from raysweep.errors import ConfigError


def load_config_file(path: str | Path) -> dict[str, Any]:
    """Read a sweep.json file into a dict; ConfigError for a missing file or bad JSON."""
    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"config file not found: {file}")
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{file}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(
            f"{file}: the top level must be a JSON object (got {type(data).__name__})"
        )
    return data


def apply_overrides(data: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Return a copy of ``data`` with dotted-path overrides (``search.num_samples``) set.

    ``None`` values are skipped, so unset CLI flags leave the file's value alone.
    """
    merged: dict[str, Any] = json.loads(json.dumps(data))
    for dotted, value in overrides.items():
        if value is None:
            continue
        node = merged
        *parents, leaf = dotted.split(".")
        for part in parents:
            child = node.get(part)
            if not isinstance(child, dict):
                child = {}
                node[part] = child
            node = child
        node[leaf] = value
    return merged


def absolute_data_paths(data: Mapping[str, Any], base: Path) -> dict[str, Any]:
    """A copy of ``data`` whose relative file paths in ``trainable_args`` are made absolute.

    A relative path resolves against ``base``, the directory of the sweep.json,
    not the current directory: trial workers run elsewhere, and the spec records
    the absolute path. A string counts as a path when ``base / value`` exists.
    """
    copied: dict[str, Any] = json.loads(json.dumps(data))
    args = copied.get("trainable_args")
    if not isinstance(args, dict):
        return copied
    for key, value in args.items():
        if not isinstance(value, str) or not value or Path(value).expanduser().is_absolute():
            continue
        candidate = base / value
        looks_like_path = "/" in value or "\\" in value or "." in value
        if looks_like_path and candidate.exists():
            args[key] = str(candidate.resolve())
    return copied


def parse_spec(
    data: Mapping[str, Any], source: str = "config", new_defaults: bool = True
) -> SweepSpec:
    """Validate a config dict into a SweepSpec; ConfigError lists every problem by path.

    The ``space`` goes through the registered space hooks first (``config.hooks``:
    library aliases become canonical names), so the spec shows what will run.
    Searcher options the config leaves out get the current defaults for a new
    sweep, recorded in the spec (``config.search_defaults``); ``new_defaults``
    False resolves them as a spec.json written before those defaults (to compare
    a config with an older run's spec).
    """
    try:
        resolved = apply_space_hooks(data)
    except ValueError as exc:
        raise ConfigError(f"{source}: invalid sweep config\n  {exc}") from None
    try:
        spec = SweepSpec.model_validate(resolved)
        if not new_defaults:
            return spec
        return with_new_defaults(spec, given_options(resolved))
    except ValidationError as exc:
        lines = [format_error(err) for err in exc.errors()]
        raise ConfigError(f"{source}: invalid sweep config\n  " + "\n  ".join(lines)) from None


def load_spec(path: str | Path, overrides: Mapping[str, Any] | None = None) -> SweepSpec:
    """Load, override and validate a sweep.json file."""
    data = apply_overrides(load_config_file(path), overrides or {})
    return parse_spec(data, source=str(path))


def spec_to_json(spec: SweepSpec) -> dict[str, Any]:
    """The fully resolved spec as plain JSON data."""
    return spec.model_dump(mode="json")


def spec_hash(spec: SweepSpec) -> str:
    """sha256 of the canonical JSON of the resolved spec."""
    canonical = json.dumps(spec_to_json(spec), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def json_schema() -> dict[str, Any]:
    """JSON Schema of sweep.json, with the parameter DSL spelled out for editors."""
    schema = SweepSpec.model_json_schema()
    param = TypeAdapter(Param).json_schema(ref_template="#/$defs/{model}")
    schema.setdefault("$defs", {}).update(param.pop("$defs", {}))
    constant = {
        "description": "a constant: any JSON value except an object with a 'type' key",
        "not": {"type": "object", "required": ["type"]},
    }
    schema["properties"]["space"] = {
        "type": "object",
        "description": "parameter name -> parameter definition or constant",
        "minProperties": 1,
        "additionalProperties": {"anyOf": [param, constant]},
    }
    schema["title"] = "raysweep sweep.json"
    return schema
