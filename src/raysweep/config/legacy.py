"""``sweep import-legacy``: the previous tool's sweep template as a sweep.json for ``trading``.

The template is JSON with ``//`` and ``/* */`` comments (and trailing commas)::

    {
        "sweep_type": "hyperband",  // hyperband, grid, random, bayesian
        "hyperband": {"iterations": 10, "max_iter": 81, "eta": 3},
        "parameter_ranges": {"lightgbm": {...}, "xgboost": {...}, "trading_params": {...}},
        "gpu_settings": {"memory_fraction": 0.8, "deterministic": true}
    }

What maps where (each mapping is printed; anything else is refused naming its key):

* ``sweep_type``: ``bayesian`` -> Optuna (TPE), ``random``, ``grid`` -> the same
  algorithm; ``hyperband`` -> random search under the ``hyperband`` scheduler;
* ``hyperband``: ``iterations`` -> ``search.num_samples`` (configurations tried);
  ``max_iter`` -> ``trainable_args.num_boost_round`` (the model's iterations);
  ``eta`` -> ``scheduler.reduction_factor``; the scheduler's unit is a
  walk-forward fold (``max_t`` = ``n_folds``);
* ``parameter_ranges``: one object per entry model (``lightgbm``, ``xgboost``,
  ``catboost``): the models the sweep chooses among (``entry_model``), each
  parameter becoming ``<model>.<name>``, conditional on its model when there are
  several; ``trading_params``: the trading parameters. A value ``[low, high]`` of
  floats is ``uniform``, of integers an ``int`` range, a longer list or one with
  strings a ``choice`` (``grid`` values for a grid sweep), an object passes through
  as a raysweep parameter, anything else is a constant;
* ``gpu_settings``: ``memory_fraction`` -> ``resources.gpus_per_trial`` (the share of
  a GPU each trial gets); ``deterministic`` -> ``reproducibility.deterministic``.

Pure config: no trainable is imported here; the command checks the result as
``sweep validate`` would (``explain`` names the template key behind an error).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from raysweep.errors import ConfigError

SWEEP_TYPES = {"bayesian": "optuna", "random": "random", "grid": "grid", "hyperband": "random"}
MODELS = ("lightgbm", "xgboost", "catboost")
TRADING_KEY = "trading_params"
TOP_KEYS = ("sweep_type", "hyperband", "parameter_ranges", "gpu_settings")
DEFAULT_FOLDS = 4
DEFAULT_SAMPLES = 20
MAX_GRID_INTS = 20
# The previous tool's names for the trading parameters (its templates varied).
TRADING_ALIASES = {
    "threshold": "entry_threshold",
    "confidence_threshold": "entry_threshold",
    "probability_threshold": "entry_threshold",
    "stop_loss_pct": "stop_loss",
    "take_profit_pct": "take_profit",
    "max_holding_period": "max_holding",
    "holding_period": "max_holding",
    "max_hold": "max_holding",
}
_TOKENS = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/|,(?=\s*[}\]])', re.DOTALL)


@dataclass
class Conversion:
    """The sweep.json data, and one line per mapping made."""

    sweep: dict[str, Any]
    notes: list[str] = field(default_factory=list)


def strip_comments(text: str) -> str:
    """JSON with ``//`` and ``/* */`` comments and trailing commas removed (strings kept)."""
    return _TOKENS.sub(lambda m: m.group(0) if m.group(0).startswith('"') else "", text)


def read_template(path: Path) -> dict[str, Any]:
    """The template's data (ConfigError for a missing file or bad JSON)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        data = json.loads(strip_comments(text))
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not JSON, even without comments: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be an object")
    return data


def convert(
    template: Mapping[str, Any],
    name: str = "legacy",
    data: str = "synthetic",
    num_samples: int | None = None,
) -> Conversion:
    """The sweep.json of ``template`` (ConfigError naming the first key it cannot map)."""
    for key in template:
        if key not in TOP_KEYS:
            raise ConfigError(f"{key}: not a key of the legacy template "
                              f"(import-legacy maps {', '.join(TOP_KEYS)})")  # fmt: skip
    sweep_type = template.get("sweep_type", "random")
    if sweep_type not in SWEEP_TYPES:
        raise ConfigError(f"sweep_type: {sweep_type!r} is not one of {', '.join(SWEEP_TYPES)}")
    out = Conversion(sweep={})
    args: dict[str, Any] = {"data": data, "n_folds": DEFAULT_FOLDS}
    out.notes.append(f"trainable 'trading' on data {data!r}, {DEFAULT_FOLDS} walk-forward folds")
    algorithm = SWEEP_TYPES[sweep_type]
    out.notes.append(f"sweep_type {sweep_type!r} -> search.algorithm {algorithm!r}")
    search: dict[str, Any] = {"algorithm": algorithm}
    scheduler = _hyperband(template, sweep_type, args, search, out)
    if num_samples is not None:
        search["num_samples"] = num_samples
    search.setdefault("num_samples", DEFAULT_SAMPLES)
    space = _space(template.get("parameter_ranges"), algorithm == "grid", out)
    out.sweep = {
        "name": name,
        "trainable": "trading",
        "trainable_args": args,
        "metric": "composite",
        "mode": "max",
        "space": space,
        "search": search,
        "scheduler": scheduler,
        **_gpu_settings(template.get("gpu_settings"), out),
    }
    out.notes.append("metric 'composite' (max): docs/trading.md defines it")
    return out


def explain(error: str) -> str:
    """A sweep.json error message with the template key behind it named too."""
    match = re.search(r"space\.(\w+)\.([\w.]+)", error)
    if match and match.group(1) in MODELS:
        key = f"parameter_ranges.{match.group(1)}.{match.group(2)}"
        return f"{error}\n  (from the template's {key})"
    match = re.search(r"space\.([\w.]+)", error)
    if match:
        return f"{error}\n  (from the template's parameter_ranges, {match.group(1)})"
    return error


def _hyperband(
    template: Mapping[str, Any],
    sweep_type: str,
    args: dict[str, Any],
    search: dict[str, Any],
    out: Conversion,
) -> dict[str, Any]:
    block = template.get("hyperband")
    if sweep_type != "hyperband":
        if block is not None:
            out.notes.append(f"hyperband: ignored (sweep_type is {sweep_type!r})")
        out.notes.append("scheduler 'fifo': every trial runs all its folds")
        return {"type": "fifo"}
    block = {} if block is None else block
    if not isinstance(block, dict):
        raise ConfigError(f"hyperband: must be an object (got {block!r})")
    known = {"iterations", "max_iter", "eta"}
    for key in block:
        if key not in known:
            raise ConfigError(f"hyperband.{key}: not mapped (import-legacy maps "
                              f"{', '.join(sorted(known))})")  # fmt: skip
    scheduler: dict[str, Any] = {"type": "hyperband", "max_t": DEFAULT_FOLDS}
    if "iterations" in block:
        search["num_samples"] = _positive_int(block["iterations"], "hyperband.iterations")
        out.notes.append(f"hyperband.iterations {block['iterations']} -> search.num_samples")
    if "max_iter" in block:
        args["num_boost_round"] = _positive_int(block["max_iter"], "hyperband.max_iter")
        out.notes.append(
            f"hyperband.max_iter {block['max_iter']} -> trainable_args.num_boost_round "
            "(the entry model's iterations)"
        )
    if "eta" in block:
        eta = block["eta"]
        if isinstance(eta, bool) or not isinstance(eta, int | float) or eta <= 1:
            raise ConfigError(f"hyperband.eta: must be a number > 1 (got {eta!r})")
        scheduler["reduction_factor"] = eta
        out.notes.append(f"hyperband.eta {eta} -> scheduler.reduction_factor")
    out.notes.append(
        f"scheduler 'hyperband' over folds: max_t {DEFAULT_FOLDS} (= trainable_args.n_folds)"
    )
    return scheduler


def _space(ranges: Any, grid: bool, out: Conversion) -> dict[str, Any]:
    if ranges is None:
        ranges = {}
    if not isinstance(ranges, dict):
        raise ConfigError(f"parameter_ranges: must be an object (got {ranges!r})")
    for key in ranges:
        if key not in (*MODELS, TRADING_KEY):
            raise ConfigError(
                f"parameter_ranges.{key}: not an entry model import-legacy knows "
                f"({', '.join(MODELS)}) nor {TRADING_KEY}"
            )
    models = [m for m in MODELS if m in ranges]
    space: dict[str, Any] = {}
    if len(models) > 1:
        if grid:
            raise ConfigError(
                "parameter_ranges: a grid sweep cannot choose among entry models "
                f"({', '.join(models)}): their parameters are conditional; use sweep_type "
                "random or bayesian, or keep one model"
            )
        space["entry_model"] = {"type": "choice", "values": models}
        out.notes.append(f"entry_model: a choice of {', '.join(models)}")
    else:
        space["entry_model"] = models[0] if models else "lightgbm"
        out.notes.append(f"entry_model: {space['entry_model']}")
    for model in models:
        block = _object(ranges[model], f"parameter_ranges.{model}")
        for key, value in block.items():
            param = _param(value, grid, f"parameter_ranges.{model}.{key}")
            if len(models) > 1 and isinstance(param, dict) and "when" not in param:
                param = {**param, "when": {"entry_model": model}}
            space[f"{model}.{key}"] = param
        out.notes.append(f"parameter_ranges.{model}: {len(block)} parameter(s) -> {model}.<name>")
    trading = _object(ranges.get(TRADING_KEY, {}), f"parameter_ranges.{TRADING_KEY}")
    for key, value in trading.items():
        name = TRADING_ALIASES.get(key, key)
        if name != key:
            out.notes.append(f"parameter_ranges.{TRADING_KEY}.{key} -> {name}")
        space[name] = _param(value, grid, f"parameter_ranges.{TRADING_KEY}.{key}")
    if trading:
        out.notes.append(f"parameter_ranges.{TRADING_KEY}: {len(trading)} trading parameter(s)")
    return space


def _param(value: Any, grid: bool, where: str) -> Any:
    """One template value as a raysweep parameter (or constant)."""
    if isinstance(value, dict):
        return dict(value)  # already a raysweep parameter (the schema checks it)
    if not isinstance(value, list):
        return value
    if not value:
        raise ConfigError(f"{where}: an empty list")
    if len(value) == 1:
        return value[0]
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
    if len(value) == 2 and numbers:
        low, high = value
        if low >= high:
            raise ConfigError(f"{where}: [low, high] needs low < high (got {value})")
        integers = all(isinstance(v, int) for v in value)
        if grid:
            if not integers or high - low + 1 > MAX_GRID_INTS:
                raise ConfigError(
                    f"{where}: a grid sweep needs the values themselves (a list of 3 or "
                    f"more), not the range {value}"
                )
            return {"type": "grid", "values": list(range(low, high + 1))}
        return {"type": "int" if integers else "uniform", "low": low, "high": high}
    return {"type": "grid" if grid else "choice", "values": list(value)}


def _gpu_settings(block: Any, out: Conversion) -> dict[str, Any]:
    if block is None:
        return {}
    block = _object(block, "gpu_settings")
    extra: dict[str, Any] = {}
    for key, value in block.items():
        if key == "memory_fraction":
            ok = isinstance(value, int | float) and not isinstance(value, bool) and 0 < value <= 1
            if not ok:
                raise ConfigError(
                    f"gpu_settings.memory_fraction: must be in (0, 1] (got {value!r})"
                )
            extra["resources"] = {"cpus_per_trial": 1, "gpus_per_trial": value}
            out.notes.append(
                f"gpu_settings.memory_fraction {value} -> resources.gpus_per_trial (on a "
                "machine without GPUs: sweep run --allow-cpu)"
            )
        elif key == "deterministic":
            if not isinstance(value, bool):
                raise ConfigError(f"gpu_settings.deterministic: true or false (got {value!r})")
            extra["reproducibility"] = {"deterministic": value}
            out.notes.append("gpu_settings.deterministic -> reproducibility.deterministic")
        else:
            raise ConfigError(
                f"gpu_settings.{key}: not mapped (import-legacy maps memory_fraction, "
                "deterministic; raysweep pins and shares GPUs itself: docs/gpus.md)"
            )
    return extra


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: must be an object (got {value!r})")
    return value


def _positive_int(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{where}: must be a positive integer (got {value!r})")
    return value
