"""Conditional parameters: which parameters of a space exist in a given trial.

A parameter with ``"when": {"entry_model": ["lightgbm"]}`` exists only in trials
whose ``entry_model`` takes one of those values (and, when ``entry_model`` is
itself conditional, only where it exists). Conditions form a forest: each
parameter names one parent, a ``choice`` (or, for random search, a ``grid``)
parameter. Pure data, no Ray: the schema validates conditions with
``check_conditions``, the searchers (``search/conditional.py``) draw only active
parameters, and ``active_config`` is the rule they all follow.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from raysweep.config.space import ChoiceParam, GridParam

# search algorithms that can express a conditional space
CONDITIONAL_ALGORITHMS: tuple[str, ...] = ("random", "optuna", "mf-tpe", "hyperopt")
Conditions = dict[str, tuple[str, list[Any]]]
"""``{parameter: (parent, values)}``: a parameter exists when its parent takes one of the values."""


def conditions(space: Mapping[str, Any]) -> Conditions:
    """``{parameter: (parent, values)}`` for every conditional parameter of ``space``."""
    out: Conditions = {}
    for name, param in space.items():
        when = getattr(param, "when", None)
        if when:
            ((parent, values),) = when.items()
            out[name] = (parent, list(values))
    return out


def check_conditions(space: Mapping[str, Any], algorithm: str) -> None:
    """ValueError naming the first bad ``when`` (path ``<name>.when...``) for ``algorithm``."""
    conds = conditions(space)
    if not conds:
        return
    first = next(iter(conds))
    if algorithm not in CONDITIONAL_ALGORITHMS:
        raise ValueError(
            f"{first}.when: conditional parameters need search.algorithm "
            f"{', '.join(CONDITIONAL_ALGORITHMS)} (got {algorithm!r}); a grid crosses "
            "every parameter with every other"
        )
    for name, (parent, values) in conds.items():
        where = f"{name}.when.{parent}"
        if isinstance(space[name], GridParam):
            raise ValueError(f"{name}.when: a grid parameter cannot be conditional; use choice")
        if parent == name or parent not in space:
            raise ValueError(f"{where}: not another parameter of the space")
        owner = space[parent]
        if not isinstance(owner, ChoiceParam | GridParam):
            raise ValueError(f"{where}: the parameter a condition names must be a choice")
        allowed = [json.dumps(v, sort_keys=True) for v in owner.values]
        for value in values:
            if json.dumps(value, sort_keys=True) not in allowed:
                raise ValueError(
                    f"{where}: {json.dumps(value)} is not one of {parent}'s values "
                    f"{json.dumps(owner.values)}"
                )
    ordered_names(space)  # refuses a cycle


def ordered_names(space: Mapping[str, Any]) -> list[str]:
    """The parameters with every parent before its children (otherwise in space order)."""
    conds = conditions(space)
    out: list[str] = []
    placed: set[str] = set()

    def place(name: str, path: tuple[str, ...]) -> None:
        if name in placed:
            return
        if name in path:
            cycle = " -> ".join([*path[path.index(name) :], name])
            raise ValueError(f"{name}.when: conditions form a cycle ({cycle})")
        if name in conds:
            place(conds[name][0], (*path, name))
        placed.add(name)
        out.append(name)

    for name in space:
        place(name, ())
    return out


def is_active(name: str, config: Mapping[str, Any], conds: Conditions) -> bool:
    """Whether ``name`` exists in a trial whose values are ``config``."""
    while name in conds:
        parent, values = conds[name]
        if parent not in config or not any(_same(config[parent], v) for v in values):
            return False
        name = parent
    return True


def drop_inactive(config: Mapping[str, Any], conds: Conditions) -> dict[str, Any]:
    """``config`` without the parameters that do not exist in it (keys outside ``conds`` kept)."""
    return {k: v for k, v in config.items() if k not in conds or is_active(k, config, conds)}


def active_config(config: Mapping[str, Any], space: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` with only the parameters of ``space`` that exist in it."""
    return drop_inactive(config, conditions(space))


def _same(a: Any, b: Any) -> bool:
    """JSON equality (``True`` is not ``1``)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
