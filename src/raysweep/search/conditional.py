"""Conditional spaces for the searchers that can express them: random, Optuna, HyperOpt.

``config/conditions.py`` says which parameters exist in a trial; here each
searcher draws accordingly, so a trial's config holds only its active parameters:

* random: Ray Tune's variant generator draws every parameter, then the inactive
  ones are dropped (they cost a draw of the seeded generator, nothing else);
* Optuna: a define-by-run space (``DefineByRun``): a parameter is suggested only
  when its parent took one of its values, so TPE models each branch on its own
  trials;
* HyperOpt: nested ``hp.choice`` (``hyperopt_space``): each value of a parent is
  a branch holding the parameters that exist under it; the nested result is
  flattened back to one level.

``ActiveOnly`` wraps each of them and returns flat configs with only the active
parameters. Grid search cannot express conditions (the schema refuses them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ray.tune.search import Searcher

from raysweep.config.conditions import Conditions, conditions, drop_inactive, ordered_names
from raysweep.config.schema import is_sampled
from raysweep.search.wrapping import WrappingSearcher


class ActiveOnly(WrappingSearcher):
    """Flat suggestions holding only the parameters active in them."""

    def __init__(self, searcher: Searcher, conds: Conditions) -> None:
        super().__init__(metric=searcher.metric, mode=searcher.mode)
        self.searcher = searcher
        self.conds = dict(conds)
        self.parents = sorted({parent for parent, _ in self.conds.values()})

    def suggest(self, trial_id: str) -> dict[str, Any] | None:
        config = self.searcher.suggest(trial_id)
        if not isinstance(config, dict):
            return config  # None (wait) or Searcher.FINISHED
        return drop_inactive(flatten_branches(config, self.parents), self.conds)

    def on_trial_result(self, trial_id: str, result: dict[str, Any]) -> None:
        self.searcher.on_trial_result(trial_id, result)

    def on_trial_complete(
        self, trial_id: str, result: dict[str, Any] | None = None, error: bool = False
    ) -> None:
        self.searcher.on_trial_complete(trial_id, result=result, error=error)


def flatten_branches(config: Mapping[str, Any], parents: list[str]) -> dict[str, Any]:
    """HyperOpt's nested branches (``{"model": {"model": "a", "a.x": 1}}``) as one level."""
    out: dict[str, Any] = {}

    def add(node: Mapping[str, Any]) -> None:
        for key, value in node.items():
            if key in parents and isinstance(value, dict) and key in value:
                add(value)
            else:
                out[key] = value

    add(config)
    return out


class DefineByRun:
    """An Optuna define-by-run space: suggests a parameter only where it exists.

    Holds Optuna distributions (picklable, as Ray saves the searcher). Called by
    Ray's OptunaSearch with the trial; returns nothing (Ray collects the values).
    """

    def __init__(self, distributions: dict[str, Any], conds: Conditions) -> None:
        self.distributions = distributions  # in parent-before-child order
        self.conds = dict(conds)

    def __call__(self, trial: Any) -> None:
        import optuna

        values: dict[str, Any] = {}
        for name, dist in self.distributions.items():
            if name in self.conds:
                parent, allowed = self.conds[name]
                if parent not in values or values[parent] not in allowed:
                    continue
            if isinstance(dist, optuna.distributions.FloatDistribution):
                values[name] = trial.suggest_float(
                    name, dist.low, dist.high, step=dist.step, log=dist.log
                )
            elif isinstance(dist, optuna.distributions.IntDistribution):
                values[name] = trial.suggest_int(
                    name, dist.low, dist.high, step=dist.step, log=dist.log
                )
            else:
                values[name] = trial.suggest_categorical(name, dist.choices)


def optuna_space(space: Mapping[str, Any], domains: Mapping[str, Any]) -> DefineByRun:
    """The define-by-run space of a conditional ``space`` (``domains``: its Ray Tune domains)."""
    from ray.tune.search.optuna import OptunaSearch

    order = [n for n in ordered_names(space) if is_sampled(space[n])]
    converted = OptunaSearch.convert_search_space({n: domains[n] for n in order})
    return DefineByRun({n: converted[n] for n in order}, conditions(space))


def hyperopt_space(space: Mapping[str, Any], domains: Mapping[str, Any]) -> dict[str, Any]:
    """The nested HyperOpt space of a conditional ``space``: each parent value is a branch."""
    from hyperopt import hp
    from ray.tune.search.hyperopt import HyperOptSearch

    conds = conditions(space)
    sampled = [n for n in ordered_names(space) if is_sampled(space[n])]
    children: dict[str, list[str]] = {}
    for name in sampled:
        if name in conds:
            children.setdefault(conds[name][0], []).append(name)

    def expression(name: str, prefix: str) -> Any:
        label = f"{prefix}/{name}" if prefix else name
        if name not in children:
            return HyperOptSearch.convert_search_space({name: domains[name]}, prefix=prefix)[name]
        branches = []
        for i, value in enumerate(space[name].values):
            branch: dict[str, Any] = {name: value}
            for child in children[name]:
                if value in conds[child][1]:
                    branch[child] = expression(child, f"{label}={i}")
            branches.append(branch)
        return hp.choice(label, branches)

    return {name: expression(name, "") for name in sampled if name not in conds}


def point_conditions(native: Any) -> Conditions | None:
    """The conditions warm-start points must follow in a searcher built on ``native``."""
    return native.conds if isinstance(native, DefineByRun) else None


def native_space(algorithm: str, space: Mapping[str, Any], domains: Mapping[str, Any]) -> Any:
    """The searcher's own form of a conditional space (None for random search)."""
    if algorithm in ("optuna", "mf-tpe"):
        return optuna_space(space, domains)
    if algorithm == "hyperopt":
        return hyperopt_space(space, domains)
    return None
