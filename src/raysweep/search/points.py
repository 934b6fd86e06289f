"""Warm-start points: earlier best configurations a new sweep evaluates first.

``sweep run --warm-start FILE`` reads a best-configs export (``{"configurations":
[...]}``, what ``sweep best --export`` and nightly.sh write; a best_config.json
with one ``config`` works too) and keeps, from each configuration, only the
parameters the sweep samples and only values its space allows. What is dropped
is said in notes that the run's log shows. They take at most half of the sweep's trials
(the other half is the searcher's, or a nightly sweep whose num_samples is no more than
the configurations exported would search nothing new). The data changed since those configs
were scored, so they are evaluated again: the searchers get them as starting
points (Ray Tune's ``points_to_evaluate`` for Optuna and HyperOpt, the first
suggestions of raysweep's random search), and they take the first trial indices.
Grid search skips them: it evaluates every grid point anyway. So does HyperOpt
over a conditional space: its nested choices take no flat starting points (Ray's
HyperOptSearch maps points onto a flat space only), and the run says so instead
of announcing points it would not evaluate.

In a conditional space (config/conditions.py) a point keeps only the parameters
that exist under its own choices, and :func:`complete_points` draws only the
missing parameters that are active in it.

Pure Python: the orchestrator checks the file before anything is written, and
``sweep validate`` or a dry run never imports Ray for it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from raysweep.config.conditions import Conditions, conditions, is_active
from raysweep.config.schema import SweepSpec, is_sampled
from raysweep.config.space import (
    ChoiceParam,
    GridParam,
    IntParam,
    LogUniformParam,
    QUniformParam,
    UniformParam,
)
from raysweep.errors import ConfigError

Point = dict[str, Any]


@dataclass(frozen=True)
class WarmStart:
    """Starting points for a sweep, where they came from, and what was dropped."""

    source: str
    points: tuple[Point, ...]
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "points": list(self.points), "notes": list(self.notes)}

    def announcement(self) -> list[str]:
        """The lines a run prints when its first trials are these points."""
        count = len(self.points)
        if count:
            head = (
                f"Warm start: {count} configuration(s) from {self.source} evaluated first "
                f"(trial indices 0...{count - 1})"
            )
        else:
            head = f"Warm start: no configuration of {self.source} is used"
        return [head, *(f"  {note}" for note in self.notes)]

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> WarmStart:
        return WarmStart(
            source=str(data.get("source", "")),
            points=tuple(dict(p) for p in data.get("points", [])),
            notes=tuple(str(n) for n in data.get("notes", [])),
        )


def read_configurations(path: Path) -> list[Point]:
    """The configurations of a best-configs export, best first (ConfigError naming the problem)."""
    where = f"--warm-start {path}"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{where}: no such file") from None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{where}: not readable JSON ({exc})") from None
    if isinstance(data, dict) and "configurations" in data:
        configs = data["configurations"]
    elif isinstance(data, dict) and isinstance(data.get("config"), dict):
        configs = [data["config"]]  # a best_config.json
    else:
        raise ConfigError(
            f"{where}: expected an object with 'configurations' (a list of configs), as "
            f"written by 'sweep best --export'; got {_describe(data)}"
        )
    if not isinstance(configs, list) or not all(isinstance(c, dict) for c in configs):
        raise ConfigError(
            f"{where}: 'configurations' must be a list of objects (got {_describe(configs)})"
        )
    return [dict(c) for c in configs]


def load_warm_start(path: Path, spec: SweepSpec) -> WarmStart:
    """The points of ``path`` that ``spec``'s sweep can use."""
    points, notes = select_points(spec, read_configurations(path))
    return WarmStart(source=str(path), points=points, notes=tuple(notes))


def select_points(
    spec: SweepSpec, configurations: Sequence[Mapping[str, Any]]
) -> tuple[tuple[Point, ...], list[str]]:
    """The usable part of each configuration, and a note for everything dropped.

    Kept: parameters the sweep samples (constants are the sweep's own; grid
    parameters of a random search stay the grid's), with a value the space
    allows. A configuration left with nothing, or equal to one kept earlier, is
    dropped; at most half of ``spec.total_trials`` points are kept (best first), so that
    a sweep warm-started from as many configurations as it has trials still searches.
    """
    if spec.search.algorithm == "grid":
        return (), ["warm start skipped: grid search evaluates every grid point anyway"]
    conds = conditions(spec.space)
    if conds and spec.search.algorithm == "hyperopt":
        return (), [
            "warm start skipped: HyperOpt's nested choices for a conditional space take no "
            "starting points; use search.algorithm optuna or random to evaluate them first"
        ]
    sampled = {
        name: param
        for name, param in spec.space.items()
        if is_sampled(param) and not isinstance(param, GridParam)
    }
    notes: list[str] = []
    points: list[Point] = []
    for number, config in enumerate(configurations, start=1):
        point: Point = {}
        for name, value in config.items():
            if name not in sampled:
                if name not in spec.space:
                    notes.append(f"configuration {number}: {name!r} dropped (not in the space)")
                elif isinstance(spec.space[name], GridParam):
                    notes.append(f"configuration {number}: {name!r} dropped (the grid sets it)")
                elif spec.space[name] != value:
                    notes.append(
                        f"configuration {number}: {name!r} dropped (a constant here: "
                        f"{json.dumps(spec.space[name])}, got {json.dumps(value)})"
                    )
                continue
            allowed, why = allowed_value(sampled[name], value)
            if allowed is _REFUSED:
                notes.append(f"configuration {number}: {name!r} dropped ({why})")
                continue
            point[name] = allowed
        for name in [n for n in point if _inactive(n, point, conds)]:
            parent, _ = conds[name]
            notes.append(
                f"configuration {number}: {name!r} dropped (inactive when {parent} is "
                f"{json.dumps(point[parent])})"
            )
            del point[name]
        if not point:
            notes.append(f"configuration {number} dropped: no parameter of the space left")
        elif point in points:
            notes.append(f"configuration {number} dropped: same as an earlier one")
        else:
            points.append(point)
    room = spec.total_trials // 2  # the other half is the searcher's: a sweep searches
    if len(points) > room:
        notes.append(
            f"{len(points) - room} configuration(s) dropped: earlier configurations take at "
            f"most half of the sweep's {spec.total_trials} trials (here {room}), so that "
            f"the searcher proposes {spec.total_trials - room} new ones; raise "
            "search.num_samples to evaluate more of them"
        )
        points = points[:room]
    return tuple(points), notes


_REFUSED = object()


def _inactive(name: str, point: Mapping[str, Any], conds: Conditions) -> bool:
    """Whether the point's own choices rule ``name`` out (not when a parent is still to draw)."""
    while name in conds:
        parent, values = conds[name]
        if parent not in point:
            return False
        if not any(_same(point[parent], v) for v in values):
            return True
        name = parent
    return False


def allowed_value(param: Any, value: Any) -> tuple[Any, str]:
    """``(value, "")`` as the parameter takes it, or ``(_REFUSED, why)``."""
    if isinstance(param, ChoiceParam):
        if any(_same(value, v) for v in param.values):
            return value, ""
        return _REFUSED, f"{json.dumps(value)} is not one of {json.dumps(param.values)}"
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return _REFUSED, f"{json.dumps(value)} is not a finite number"
    if isinstance(param, IntParam):
        if not float(value).is_integer():
            return _REFUSED, f"{value} is not an integer"
        number = int(value)
        on_step = param.step == 1 or (number - param.low) % param.step == 0
        if not on_step and number % param.step:  # Ray's qrandint rounds to multiples of step
            return _REFUSED, f"{number} is not on the step {param.step} from {param.low}"
        if not param.low <= number <= param.high:
            return _REFUSED, f"{number} is outside [{param.low}, {param.high}]"
        return number, ""
    if isinstance(param, UniformParam | LogUniformParam | QUniformParam):
        if not param.low <= value <= param.high:
            return _REFUSED, f"{value} is outside [{param.low}, {param.high}]"
        return float(value), ""
    return _REFUSED, f"unsupported parameter type {type(param).__name__}"


def _same(a: Any, b: Any) -> bool:
    """JSON equality: ``True`` is not ``1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    return bool(a == b)


def complete_points(
    points: Sequence[Mapping[str, Any]],
    domains: Mapping[str, Any],
    seed: int,
    conds: Conditions | None = None,
) -> list[Point]:
    """Points with every parameter of ``domains``: a missing one is drawn with ``seed``.

    Optuna and HyperOpt take only whole points; ``domains`` are Ray Tune domains
    (``.sample(random_state=...)``). ``conds``: a conditional space's conditions;
    then a point holds only the parameters active in it (parents are settled
    first), and only those are drawn.
    """
    import numpy as np

    conds = conds or {}
    order = sorted(domains, key=lambda name: _depth(name, conds))  # stable: parents first
    random_state = np.random.RandomState(seed % 2**32)
    completed = []
    for point in points:
        full: Point = {}
        for name in order:
            if name in conds and not is_active(name, full, conds):
                continue
            full[name] = point[name] if name in point else _sample(domains[name], random_state)
        completed.append({name: full[name] for name in domains if name in full})
    return completed


def _depth(name: str, conds: Conditions) -> int:
    """How many conditions lie above ``name`` (0: unconditional)."""
    depth = 0
    while name in conds and depth <= len(conds):  # the schema refuses cycles
        name, depth = conds[name][0], depth + 1
    return depth


def _sample(domain: Any, random_state: Any) -> Any:
    value = domain.sample(random_state=random_state)
    return value.item() if hasattr(value, "item") else value


def _describe(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 80 else text[:77] + "..."
