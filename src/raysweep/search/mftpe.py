"""Multi-fidelity TPE: Optuna's TPE that learns from every report of every trial.

With early stopping, most of what a sweep learns arrives as intermediate results:
a trial reports at each rung long before it ends, and most trials are stopped
at the first rung. Optuna's TPE behind Ray's OptunaSearch (``"optuna"``) hears
a trial only when it ends, and counts the running ones as bad (its constant
liar), though under ASHA the trials still running are the ones that passed
their rungs. ``"mf-tpe"`` gives TPE, at each suggestion, every trial seen so
far as Optuna ranks pruned trials: a trial that ran its full length by its
final value; every other trial, running or stopped, as pruned at the last
iteration it reported, ranked by how far it got, then by its value there (the
ranking Optuna's own pruners feed TPE, and BOHB's idea of modelling the
furthest rung with results). So the model steers from the first rung results
on, about a tenth of the budget into a 27-step sweep.

Each suggestion builds TPE afresh from that record (an in-memory study), its
sampler seeded by the sweep's seed and the suggestion's number: what it
suggests depends on the seed and the results it was told, never on how often
it was asked before. The record is plain data, saved with the searcher (Ray's
checkpoint), so a resumed sweep suggests what the uninterrupted one would.
Strict mode wraps it like any searcher (search/window.py): results are then
told in trial-index order. Measured in benchmarks/BENCHMARKS.md (search quality).
"""

from __future__ import annotations

import copy
import math
import pickle
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
import optuna
from optuna.distributions import BaseDistribution
from optuna.trial import TrialState
from ray.tune.search import Searcher

ITERATION = "training_iteration"
DEFAULT_STARTUP = 5  # random suggestions before TPE: rung results arrive early


class MultiFidelityTPE(Searcher):
    """TPE over every trial's latest report (Ray Tune ``Searcher``).

    Args:
        distributions: Optuna's distribution of every parameter, by name.
        define_by_run: for a conditional space (search/conditional.py), the callable
            that suggests only the parameters active in a trial; None: all of them.
        metric, mode: the sweep's metric and direction.
        seed: the sweep's seed.
        full_length: iterations of a trial run to its end (a scheduler stops others
            earlier); None: every trial that ends without error is complete.
        n_startup_trials: trials with results before TPE takes over (random before).
        multivariate, group: Optuna TPE's options.
        points: warm-start configurations suggested first, in order.
    """

    def __init__(
        self,
        distributions: Mapping[str, BaseDistribution],
        metric: str,
        mode: str,
        seed: int,
        full_length: int | None = None,
        n_startup_trials: int = DEFAULT_STARTUP,
        multivariate: bool = True,
        group: bool = False,
        points: Sequence[Mapping[str, Any]] = (),
        define_by_run: Callable[[Any], Any] | None = None,
    ) -> None:
        super().__init__(metric=metric, mode=mode)
        self.distributions = dict(distributions)
        self.define_by_run = define_by_run
        self.seed = seed
        self.full_length = full_length
        self.n_startup_trials = n_startup_trials
        self.multivariate = multivariate
        self.group = group
        self.points = [dict(p) for p in points]
        self.order: list[str] = []  # trial ids in suggestion order
        self.trials: dict[str, dict[str, Any]] = {}  # id -> params, distributions, values, end

    # -- suggestions -------------------------------------------------------------------
    def suggest(self, trial_id: str) -> dict[str, Any] | None:
        if trial_id in self.trials:  # asked again for a known trial: the same config
            return dict(self.trials[trial_id]["params"])
        if self.points:  # a warm-start point: whole (search/points.py completes it)
            params = {k: v for k, v in self.points.pop(0).items() if k in self.distributions}
        else:
            params = self._sample(len(self.order))
        self.order.append(trial_id)
        self.trials[trial_id] = {"params": params, "values": {}, "end": None}
        return dict(params)

    def _sample(self, number: int) -> dict[str, Any]:
        """Suggestion ``number``: TPE over every trial told so far."""
        study = self._study(number)
        if self.define_by_run is None:
            return dict(study.ask(dict(self.distributions)).params)
        trial = study.ask()
        self.define_by_run(trial)
        return dict(trial.params)

    def _study(self, number: int) -> optuna.Study:
        """A study holding every trial told so far, its TPE seeded for suggestion ``number``."""
        seed = int(np.random.SeedSequence([self.seed % 2**32, number]).generate_state(1)[0])
        with warnings.catch_warnings():  # group is "experimental" in Optuna
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            sampler = optuna.samplers.TPESampler(
                seed=seed,
                n_startup_trials=self.n_startup_trials,
                multivariate=self.multivariate,
                group=self.group,
                constant_liar=False,
            )
        direction: Literal["minimize", "maximize"] = (
            "maximize" if self.mode == "max" else "minimize"
        )
        study = optuna.create_study(sampler=sampler, direction=direction)
        study.add_trials([t for i in self.order if (t := self._frozen(i)) is not None])
        return study

    def _frozen(self, trial_id: str) -> optuna.trial.FrozenTrial | None:
        """The trial as TPE ranks it: complete, pruned at its last report, or left out."""
        record = self.trials[trial_id]
        values: dict[int, float] = record["values"]
        if record["end"] == "error" or not values:
            return None  # failed, or nothing reported yet
        last = max(values)
        complete = record["end"] == "complete" and (
            self.full_length is None or last >= self.full_length
        )
        params = record["params"]
        common = {"params": params, "distributions": {k: self.distributions[k] for k in params}}
        if complete:
            return optuna.trial.create_trial(
                state=TrialState.COMPLETE, value=values[last], **common
            )
        return optuna.trial.create_trial(
            state=TrialState.PRUNED, intermediate_values=dict(values), **common
        )

    # -- results ---------------------------------------------------------------------
    def on_trial_result(self, trial_id: str, result: dict[str, Any]) -> None:
        record = self.trials.get(trial_id)
        value = result.get(self.metric) if isinstance(self.metric, str) else None
        step = result.get(ITERATION)
        if record is None or record["end"] is not None or not _number(value):
            return
        if isinstance(step, int) and not isinstance(step, bool):
            record["values"][step] = float(value)  # type: ignore[arg-type]

    def on_trial_complete(
        self, trial_id: str, result: dict[str, Any] | None = None, error: bool = False
    ) -> None:
        record = self.trials.get(trial_id)
        if record is None or record["end"] is not None:
            return
        if result and not error:
            self.on_trial_result(trial_id, result)
        record["end"] = "error" if error else "complete"

    def add_evaluated_point(
        self,
        parameters: dict[str, Any],
        value: float,
        error: bool = False,
        pruned: bool = False,
        intermediate_values: list[float] | None = None,
    ) -> None:
        """A trial evaluated elsewhere (an extension's earlier trials): told as ended."""
        trial_id = f"evaluated-{len(self.order)}"
        params = {k: v for k, v in parameters.items() if k in self.distributions}
        values = {self.full_length or 1: float(value)} if _number(value) else {}
        if pruned and intermediate_values:
            values = {i + 1: float(v) for i, v in enumerate(intermediate_values) if _number(v)}
        self.order.append(trial_id)
        self.trials[trial_id] = {"params": params, "values": values,
                                 "end": "error" if error else "complete"}  # fmt: skip

    # -- state -----------------------------------------------------------------------
    def get_state(self) -> dict[str, Any]:
        return copy.deepcopy(self.__dict__)

    def set_state(self, state: dict[str, Any]) -> None:
        self.__dict__.update(copy.deepcopy(state))

    def save(self, checkpoint_path: str) -> None:
        with open(checkpoint_path, "wb") as f:  # Ray's searcher checkpoint, as OptunaSearch's
            pickle.dump(self.__dict__.copy(), f)

    def restore(self, checkpoint_path: str) -> None:
        with open(checkpoint_path, "rb") as f:
            self.__dict__.update(pickle.load(f))


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def make_mftpe(
    space: dict[str, Any],
    num_samples: int,
    seed: int,
    metric: str | list[str],
    mode: str | list[str],
    options: dict[str, Any],
    full_length: int | None = None,
    points: Sequence[Mapping[str, Any]] = (),
    native_space: Any = None,
) -> Searcher:
    """``"algorithm": "mf-tpe"``: the factory the registry names (search.options: mf-tpe's).

    ``native_space``: a conditional space's define-by-run form (search/conditional.py).
    """
    from ray.tune.search.optuna import OptunaSearch

    from raysweep.search.conditional import point_conditions
    from raysweep.search.points import complete_points

    if not isinstance(metric, str) or not isinstance(mode, str):
        raise ValueError("mf-tpe optimizes one objective")  # the schema refuses it first
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    distributions = (
        dict(native_space.distributions)
        if native_space is not None
        else OptunaSearch.convert_search_space(space)
    )
    whole = complete_points(points, space, seed, point_conditions(native_space)) if points else []
    return MultiFidelityTPE(
        distributions,
        metric=metric,
        mode=mode,
        seed=seed,
        full_length=full_length,
        n_startup_trials=int(options.get("n_startup_trials", DEFAULT_STARTUP)),
        multivariate=bool(options.get("multivariate", True)),
        group=bool(options.get("group", native_space is not None)),
        points=whole,
        define_by_run=native_space,
    )
