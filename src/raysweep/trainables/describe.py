"""What a trainable knows before any trial runs: its data, and how many results a trial reports.

``describe_data(spec)`` asks the trainable for a summary of its data, in the sweep's
own process (``sweep validate``, and the start of ``sweep run``/``resume``, which
print it and record it in sweep_output.log and repro.json), never on a Ray worker:

* a built-in offers a describer in :data:`DATA_DESCRIBERS` (``trading``: bars, span,
  interval, gaps, folds and their dates);
* a user trainable offers one as an attribute of its function, ``fit.describe_data =
  describe``, called with ``trainable_args``.

A describer returns a :class:`DataSummary`, or lines of text. It runs after the
trainable's checks, which loaded the data already (cached): it costs next to nothing.

``reports_per_trial(spec)``: how many results one trial of a built-in reports (folds,
boosting rounds over ``report_every``, epochs), so that a scheduler's ``max_t`` beyond
it is warned about.

``best_trial_warnings(spec, best)``: what the trainable says of the sweep's best trial
at the end (:data:`BEST_CHECKERS`, or a user function's ``check_best`` attribute, called
with ``trainable_args`` and the trial's last result): ``trading`` warns when it made
fewer trades than ``min_trades``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from raysweep.config.schema import SweepSpec, is_sampled
from raysweep.errors import SweepError, TrainableError
from raysweep.trainables.builtins import BUILTIN_TRAINABLES, positive_int_arg

DATA_DESCRIBERS: dict[str, str] = {
    "trading": "raysweep.trainables.trading.summary:describe_trading_data",
}
BEST_CHECKERS: dict[str, str] = {
    "trading": "raysweep.trainables.trading.summary:check_best_trial",
}
USER_HOOK = "describe_data"  # the attributes of a user trainable's function
USER_CHECK = "check_best"


@dataclass(frozen=True)
class DataSummary:
    """A trainable's data in words (``lines``) and as data (``facts``, for repro.json)."""

    lines: tuple[str, ...]
    facts: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()  # printed as "warning: ..." after the lines

    def to_json(self) -> dict[str, Any]:
        return {"summary": list(self.lines), **self.facts, "warnings": list(self.warnings)}


def describe_data(spec: SweepSpec) -> DataSummary | None:
    """The trainable's summary of its data (None: it offers none)."""
    describer = _hook(spec.trainable, DATA_DESCRIBERS, USER_HOOK)
    if describer is None:
        return None
    try:
        found = describer(dict(spec.trainable_args))
    except SweepError:
        raise
    except Exception as exc:
        raise TrainableError(
            f"trainable {spec.trainable!r}: {USER_HOOK} failed: {type(exc).__name__}: {exc}"
        ) from None
    return as_summary(found)


def as_summary(found: Any) -> DataSummary | None:
    """A describer's answer as a DataSummary: one already, a string, or lines."""
    if found is None or isinstance(found, DataSummary):
        return found
    if isinstance(found, str):
        return DataSummary(tuple(found.splitlines()))
    if isinstance(found, Sequence):
        return DataSummary(tuple(str(line) for line in found))
    raise TrainableError(
        f"{USER_HOOK} returned {type(found).__name__}; expected lines of text or a DataSummary"
    )


def best_trial_warnings(spec: SweepSpec, trial_id: str, last: Mapping[str, Any]) -> list[str]:
    """What the trainable says of the sweep's best trial (its ``last`` result)."""
    checker = _hook(spec.trainable, BEST_CHECKERS, USER_CHECK)
    if checker is None:
        return []
    try:  # the trials are done: a failing check costs a warning, never the results
        found = checker(dict(spec.trainable_args), trial_id, dict(last))
    except Exception as exc:
        return [f"{USER_CHECK} of trainable {spec.trainable!r} failed: {type(exc).__name__}: {exc}"]
    return [str(w) for w in found or []]


def _hook(trainable: str, builtins: Mapping[str, str], attribute: str) -> Callable[..., Any] | None:
    """A built-in's registered function, or the attribute of a user trainable's function."""
    from raysweep.registry import import_ref

    if trainable in BUILTIN_TRAINABLES:
        ref = builtins.get(trainable)
        return import_ref(ref) if ref else None
    from raysweep.trainables.user import load_user_trainable

    hook = getattr(load_user_trainable(trainable), attribute, None)
    return hook if callable(hook) else None


def reports_per_trial(spec: SweepSpec) -> tuple[int, str] | None:
    """How many results one trial of a built-in reports, and the setting that says so."""
    args, space = spec.trainable_args, spec.space
    if spec.trainable == "trading":
        from raysweep.trainables.trading.params import ARG_DEFAULTS, int_value

        folds = int_value(args, "n_folds", ARG_DEFAULTS["n_folds"], "trainable_args", 1)
        return folds, f"one per fold: trainable_args.n_folds {folds}"
    if spec.trainable in ("lightgbm", "xgboost", "catboost"):
        rounds = _setting(args, space, "num_boost_round", 100)
        every = positive_int_arg(args, "report_every", 1)
        if rounds is None:
            return None
        reports = math.ceil(rounds / every)
        return reports, f"num_boost_round {rounds} / report_every {every}"
    if spec.trainable == "torch_mlp":
        epochs = _setting(args, space, "epochs", 10)
        return None if epochs is None else (epochs, f"one per epoch: epochs {epochs}")
    return None


def max_t_warning(spec: SweepSpec) -> str | None:
    """A warning when the scheduler's ``max_t`` is more than a trial ever reports."""
    max_t = getattr(spec.scheduler, "max_t", None)
    known = reports_per_trial(spec)
    if max_t is None or known is None or max_t <= known[0]:
        return None
    reports, why = known
    return (
        f"warning: scheduler.max_t {max_t} is more than the {reports} result(s) a "
        f"{spec.trainable} trial reports ({why}): {spec.scheduler.type} places its rungs "
        f"for {max_t} iterations, so it stops trials later than meant or not at all; "
        f"set scheduler.max_t to {reports}"
    )


def _setting(args: Mapping[str, Any], space: Mapping[str, Any], key: str, default: int) -> Any:
    """``key`` from the space's constant or trainable_args (None: sampled per trial)."""
    if key in space:
        return None if is_sampled(space[key]) else positive_int_arg(space, key, default)
    return positive_int_arg(args, key, default)
