"""What a resume may change: spec.json plus the allowed overrides, for any engine.

Only reads: a refusal (a changed config, a shrinking sweep) leaves every file as it was.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from raysweep.config.load import parse_spec, spec_to_json
from raysweep.config.schema import SweepSpec
from raysweep.errors import ConfigError, ResumeError
from raysweep.rundir import RunDir

# Fields that may differ from spec.json on resume: run-time settings, not results.
RUNTIME_FIELDS = (
    "search.max_concurrent",
    "logging.tensorboard",
    "logging.mlflow",
    "logging.mlflow.tracking_uri",
    "logging.mlflow.experiment_name",
)


@dataclass(frozen=True)
class ResumeConfig:
    """The config of ``sweep run --config F --resume``, resolved two ways.

    ``spec``: with today's defaults, as a new sweep records them; ``as_before``: as a
    raysweep before those defaults resolved it (``parse_spec(new_defaults=False)``),
    which is what a run directory made then holds (TPE's options, say). The run
    resumes when either matches its spec.json.
    """

    spec: SweepSpec
    as_before: SweepSpec | None = None


def flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    """``{"a": {"b": 1}}`` -> ``{"a.b": 1}``; lists and scalars are leaves."""
    if not isinstance(data, dict) or not data:
        return {prefix: data} if prefix else {}
    flat: dict[str, Any] = {}
    for key, value in data.items():
        flat.update(flatten(value, f"{prefix}.{key}" if prefix else str(key)))
    return flat


def spec_changes(old: SweepSpec, new: SweepSpec, ignore: tuple[str, ...] = ()) -> list[str]:
    """``path: old -> new`` for every resolved field that differs (dotted paths, sorted)."""
    import json

    before, after = flatten(spec_to_json(old)), flatten(spec_to_json(new))
    missing = object()
    lines = []
    for path in sorted(set(before) | set(after)):
        if path in ignore:
            continue
        a, b = before.get(path, missing), after.get(path, missing)
        if a != b:
            show = [("(unset)" if v is missing else json.dumps(v)) for v in (a, b)]
            lines.append(f"{path}: {show[0]} → {show[1]}")
    return lines


def resumed_spec(
    run_dir: RunDir,
    stored: SweepSpec,
    given: SweepSpec | ResumeConfig | None = None,
    num_samples: int | None = None,
    max_concurrent: int | None = None,
) -> SweepSpec:
    """The spec a resume runs with: spec.json plus the allowed overrides.

    ``given`` (``sweep run --config F --resume``) must resolve to spec.json except
    for run-time fields and, when ``--num-samples`` is given, search.num_samples.
    spec.json is compared as loading it today resolves it: one written before
    library aliases were resolved (``num_leaf``) is the same sweep as a config that
    resolves to ``num_leaves``. A run made before today's defaults also resumes
    with the config it was started with: F resolved as then (``ResumeConfig``)
    against spec.json read as then. The resume still runs spec.json as recorded.
    """
    if given is not None:
        config = given.spec if isinstance(given, ResumeConfig) else given
        before = given.as_before if isinstance(given, ResumeConfig) else None
        ignore = RUNTIME_FIELDS + (("search.num_samples",) if num_samples is not None else ())
        changes = spec_changes(_as_loaded_today(stored), config, ignore)
        if changes and before is not None and not spec_changes(_as_read(stored), before, ignore):
            changes = []  # the config this older run was started with
        if changes:
            raise ResumeError(
                f"cannot resume {run_dir}: the config differs from the run's spec.json in "
                f"{len(changes)} field(s):\n  " + "\n  ".join(changes) + "\n"
                "Nothing was changed. Resume with the original config, or start a new run "
                "under another --name."
            )
        if max_concurrent is None:
            max_concurrent = config.search.max_concurrent
    data = spec_to_json(stored)
    old_n, old_mc = stored.search.num_samples, stored.search.max_concurrent
    if num_samples is not None:
        if num_samples < old_n:
            raise ConfigError(
                f"--num-samples: a sweep cannot shrink (got {num_samples} < {old_n}, the "
                f"run's search.num_samples)"
            )
        data["search"]["num_samples"] = num_samples
    if max_concurrent is not None and max_concurrent != old_mc:
        data["search"]["max_concurrent"] = max_concurrent
    return SweepSpec.model_validate(data)


def _as_loaded_today(stored: SweepSpec) -> SweepSpec:
    """``stored`` through today's loading (library aliases resolved); as is if that fails."""
    try:
        return parse_spec(spec_to_json(stored), source="spec.json")
    except ConfigError:
        return stored  # the comparison then names what differs


def _as_read(stored: SweepSpec) -> SweepSpec:
    """``stored`` with library aliases resolved and no default added (as it was written)."""
    try:
        return parse_spec(spec_to_json(stored), source="spec.json", new_defaults=False)
    except ConfigError:
        return stored
