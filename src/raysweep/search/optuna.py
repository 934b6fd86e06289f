"""Optuna search (TPE by default) through Ray Tune's OptunaSearch."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import optuna
from ray.tune.search import Searcher
from ray.tune.search.optuna import OptunaSearch

from raysweep._raycompat.searcher_state import (
    optuna_pending,
    optuna_told,
    optuna_trial_and_study,
)
from raysweep.config.schema import OptunaOptions
from raysweep.search.conditional import point_conditions
from raysweep.search.points import complete_points

ITERATION = "training_iteration"
N_STARTUP_TRIALS: int = OptunaOptions.model_fields["n_startup_trials"].default


class PruningOptunaSearch(OptunaSearch):
    """OptunaSearch that tells Optuna which trials a scheduler stopped early.

    Ray's OptunaSearch records a trial stopped by ASHA or Hyperband after a few
    iterations as *complete* with its truncated metric, so TPE compares a
    3-iteration loss with an 81-iteration one. Here a trial that ended without an
    error before ``full_length`` iterations is told to Optuna as *pruned*, with its
    last metric as the intermediate value at its last iteration; TPE then ranks
    pruned trials by how far they got, then by that value (as with Optuna's own
    pruners). ``full_length`` None keeps Ray's behaviour for them. A trial that
    errored is told as failed (Ray tells its last metric as complete), so TPE
    leaves it out.
    """

    def __init__(self, *args: Any, full_length: int | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.full_length = full_length

    def on_trial_result(self, trial_id: str, result: dict[str, Any]) -> None:
        # A trial restarted from its first iteration (Hyperband resumes a paused trial
        # without a checkpoint that way) reports its steps again; Optuna keeps the
        # first value and would warn once per step.
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="The reported value is ignored")
            super().on_trial_result(trial_id, result)

    def on_trial_complete(
        self, trial_id: str, result: dict[str, Any] | None = None, error: bool = False
    ) -> None:
        if not optuna_pending(self, trial_id):
            super().on_trial_complete(trial_id, result, error)  # Ray's warning
            return
        step = (result or {}).get(ITERATION)
        value = (result or {}).get(self.metric) if isinstance(self.metric, str) else None
        ot_trial, study = optuna_trial_and_study(self, trial_id)
        if error:  # Ray would record the last metric of an errored trial as complete
            study.tell(ot_trial, state=optuna.trial.TrialState.FAIL)
        elif (
            self.full_length is not None
            and isinstance(step, int)
            and step < self.full_length
            and isinstance(value, int | float)
        ):
            # Ray does not pass on the result a scheduler stops a trial on; Optuna
            # warns and keeps the first value when the step was already reported.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ot_trial.report(float(value), step)
            study.tell(ot_trial, state=optuna.trial.TrialState.PRUNED)
        else:
            super().on_trial_complete(trial_id, result, error)
            return
        optuna_told(self, trial_id)


def make_optuna(
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
    """OptunaSearch with a seeded sampler chosen by ``options.sampler``.

    ``metric``/``mode`` lists: a multi-objective study (Optuna's samplers but
    ``cmaes`` handle several directions); trials are told their last values.

    ``full_length``: iterations of a trial no scheduler stopped (None when trials
    are never stopped early); shorter trials are told to Optuna as pruned.
    ``points``: warm-start configurations, enqueued in the study before anything
    is sampled (``points_to_evaluate``); missing parameters are drawn with ``seed``.
    ``native_space``: a define-by-run space used instead of ``space`` (a conditional
    space: search/conditional.py).
    """
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    name = options.get("sampler", "tpe")
    startup = int(options.get("n_startup_trials", N_STARTUP_TRIALS))
    sampler: optuna.samplers.BaseSampler
    if name == "tpe":
        sampler = tpe_sampler(seed, startup, options)
    elif name == "cmaes":
        sampler = optuna.samplers.CmaEsSampler(seed=seed, n_startup_trials=startup)
    elif name == "gp":
        sampler = optuna.samplers.GPSampler(seed=seed, n_startup_trials=startup)
    elif name == "nsga2":  # multi-objective (a genetic algorithm; its own start-up: a population)
        sampler = optuna.samplers.NSGAIISampler(seed=seed)
    else:
        sampler = optuna.samplers.RandomSampler(seed=seed)
    return PruningOptunaSearch(
        space=native_space or OptunaSearch.convert_search_space(space),
        metric=metric,
        mode=mode,
        sampler=sampler,
        full_length=full_length,
        points_to_evaluate=(
            complete_points(points, space, seed, point_conditions(native_space)) if points else None
        ),
    )


def tpe_sampler(seed: int, startup: int, options: Mapping[str, Any]) -> optuna.samplers.TPESampler:
    """TPE as the spec says; ``constant_liar``/``group`` absent: Optuna's own default.

    A spec.json written before those options existed has neither, so an old run
    resumes with the sampler it was started with (config/search_defaults.py).
    """
    kwargs: dict[str, Any] = {"multivariate": bool(options.get("multivariate"))}
    for key in ("constant_liar", "group"):
        if options.get(key) is not None:
            kwargs[key] = bool(options[key])
    with warnings.catch_warnings():  # group is "experimental" in Optuna 5
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        return optuna.samplers.TPESampler(seed=seed, n_startup_trials=startup, **kwargs)
