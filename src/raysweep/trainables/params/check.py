"""Check a built-in trainable's ``space`` before anything starts: names, owned keys, values.

1. Keys raysweep owns (seeds, threads, devices, determinism, logging, the metric,
   the number of rounds when ``trainable_args`` sets it) are refused with where
   raysweep takes them from.
2. Unknown names are refused with the nearest valid ones; aliases are fine.
3. Values: the constants alone, then each sampled parameter's corners (low,
   high, every choice) with the constants, go through the library's own
   validation on a tiny dataset (``probes``). A corner the library refuses is
   tried once more with each corner of every other sampled parameter: if one of
   them makes it valid, the two interact and the corner stays (some trials may
   then fail; docs/config.md says what this check cannot see).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from raysweep._imports import try_import
from raysweep.config.schema import SweepSpec, is_sampled
from raysweep.errors import ConfigError
from raysweep.repro.gbm_params import METRIC_KEYS, METRIC_SOURCE, OWNED_PARAMS
from raysweep.trainables.builtins import BUILTIN_EXTRAS
from raysweep.trainables.params.corners import Corner, corners, representative
from raysweep.trainables.params.names import (
    ROUNDS_ARG,
    ROUNDS_CANONICAL,
    NameTable,
    did_you_mean,
    name_table,
)
from raysweep.trainables.params.probes import Outcome, Probe, make_probe
from raysweep.trainables.params.tiny_data import DataShape, data_shape, tiny_dataset


def check_space(spec: SweepSpec) -> None:
    """ConfigError naming the first bad key of a built-in's ``space`` (and why)."""
    check_params(
        spec.trainable,
        spec.space,
        spec.trainable_args,
        data_shape(spec.trainable_args),
        spec.reproducibility.deterministic,
        spec.seed,
    )


def check_params(
    trainable: str,
    space: Mapping[str, Any],
    trainable_args: Mapping[str, Any],
    shape: DataShape,
    deterministic: bool,
    seed: int,
) -> None:
    """The check of ``space`` for ``trainable``'s library on data shaped like ``shape``.

    ``check_space`` for a built-in; the ``trading`` trainable checks its entry
    models' parameters through it.
    """
    module = BUILTIN_EXTRAS[trainable]
    with try_import(module, f"trainable {trainable!r}") as imported:
        table = name_table(trainable)
    imported.check()
    for key in space:
        reason = owned_reason(trainable, key, table.resolve(key), trainable_args)
        if reason:
            raise ConfigError(f"space.{key}: not a parameter to set here: {reason}")
    for key in space:
        if table.complete and not table.knows(key):
            raise ConfigError(_unknown(table, key))
    dataset = tiny_dataset(shape)
    with try_import(module, f"trainable {trainable!r}") as imported:
        probe = make_probe(trainable, trainable_args, dataset, deterministic, seed)
    imported.check()
    _SpaceCheck(space, table, probe).run()


def owned_reason(
    trainable: str, key: str, canonical: str, trainable_args: Mapping[str, Any]
) -> str | None:
    """Why ``key`` (whose canonical name is ``canonical``) cannot be set in ``space``, or None."""
    owned = OWNED_PARAMS.get(trainable, {})
    reason = owned.get(key) or owned.get(canonical)
    if reason:
        return reason
    metric_keys = METRIC_KEYS.get(trainable, frozenset())
    if key in metric_keys or canonical in metric_keys:
        return METRIC_SOURCE
    rounds_arg = ROUNDS_ARG.get(trainable, "")
    if canonical == ROUNDS_CANONICAL.get(trainable) and rounds_arg in trainable_args:
        what = "epochs" if trainable == "torch_mlp" else "boosting rounds"
        return (
            f"trainable_args.{rounds_arg} sets the number of {what} "
            f"({trainable_args[rounds_arg]!r}); to tune it, remove trainable_args.{rounds_arg}"
        )
    return None


def _unknown(table: NameTable, key: str) -> str:
    hint = did_you_mean(table.suggest(key))
    return f"space.{key}: unknown {table.label} parameter{hint}"


class _SpaceCheck:
    """The corner check of one space against one probe."""

    def __init__(self, space: Mapping[str, Any], table: NameTable, probe: Probe) -> None:
        self.table, self.probe = table, probe
        self.constants = {k: v for k, v in space.items() if not is_sampled(v)}
        self.sampled = {k: corners(v) for k, v in space.items() if is_sampled(v)}
        self.representatives = {k: representative(v) for k, v in space.items()}
        self.used: set[str] = set()  # keys the library used in some accepted configuration
        self.seen: set[str] = set()  # keys that were part of some accepted configuration

    def run(self) -> None:
        self._check_unknown_names()
        self._check_constants()
        for key, values in self.sampled.items():
            for corner in values:
                self._check_corner(key, corner)
        for key in self.representatives:
            if key in self.seen and key not in self.used:
                self._refuse_ignored(key)

    def _try(self, config: dict[str, Any]) -> Outcome:
        outcome = self.probe(config)
        if outcome.error is None:
            self.seen |= set(config)
            self.used |= set(config) - outcome.ignored
        return outcome

    def _check_unknown_names(self) -> None:
        """Names outside an incomplete table: the library decides (CatBoost's "Unknown option")."""
        suspects = [k for k in self.representatives if not self.table.knows(k)]
        base = {k: v for k, v in self.constants.items() if k not in suspects}
        for key in suspects:
            outcome = self.probe({**base, key: self.representatives[key]})
            if key in outcome.ignored and outcome.error is not None:
                raise ConfigError(
                    f"{_unknown(self.table, key)} ({self.table.label}: {outcome.error})"
                )

    def _check_constants(self) -> None:
        outcome = self._try(dict(self.constants))
        if outcome.error is None:
            return
        for key in self.constants:
            rest = {k: v for k, v in self.constants.items() if k != key}
            if self.probe(rest).error is None:
                shown = Corner(self.constants[key], "value").describe(key)
                raise ConfigError(
                    f"space.{key}: {self.table.label} refuses {shown}: {outcome.error}"
                )
        keys = ", ".join(self.constants) or "none"
        raise ConfigError(
            f"space: {self.table.label} refuses these settings (constants: {keys}): {outcome.error}"
        )

    def _check_corner(self, key: str, corner: Corner) -> None:
        outcome = self._try({**self.constants, key: corner.value})
        if outcome.error is None:
            return
        for other, values in self.sampled.items():
            if other == key:
                continue
            for value in values:
                config = {**self.constants, key: corner.value, other: value.value}
                if self._try(config).error is None:
                    return  # valid together with another parameter's value
        raise ConfigError(
            f"space.{key}: {self.table.label} refuses {corner.describe(key)}: {outcome.error}"
        )

    def _refuse_ignored(self, key: str) -> None:
        label = self.table.label
        if not self.table.knows(key):
            hint = did_you_mean(self.table.suggest(key))
            raise ConfigError(f"space.{key}: unknown {label} parameter ({label} ignores it){hint}")
        raise ConfigError(
            f"space.{key}: {label} does not use this parameter with these settings "
            "(it would be ignored)"
        )
