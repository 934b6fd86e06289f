"""The searcher defaults a new sweep gets, written into its resolved spec.

A new strict sweep whose config leaves ``reproducibility.strict_schedule`` unset
records ``"window"`` (``"batch"`` when the config says so); a spec.json without
it (written before the window existed) runs the batches it ran with, and its
sha256 stays as it was. In the same way a new ASHA sweep whose config leaves
``scheduler.rung_rule`` unset records ``"rank"``; a spec.json without it resumes
with the ``percentile`` rule of Ray Tune's ASHA it ran with.

Optuna's TPE defaults changed under raysweep: Optuna 5's ``TPESampler`` is
multivariate for one objective and a constant liar (running trials count as
bad results, so trials suggested while others run spread out), where raysweep
built it univariate. On a multi-fidelity Hartmann-6 at 120 trials and 2 slots,
``sweep run`` with TPE + ASHA reached a median regret 1.75x plain Optuna's
(9 seeds); with ``"multivariate": true`` it reached 0.32x (5 seeds).

A new sweep (``parse_spec``: sweep.json, ``sweep validate``) records every TPE
option it did not set: ``multivariate`` (true for one objective, as Optuna),
``constant_liar`` (true, as Optuna 5) and ``group`` (true when the space has
conditional parameters: multivariate TPE alone samples a parameter that is not
in every trial independently). A spec.json written before these options
existed has ``multivariate`` and no ``constant_liar``/``group``; it is read
as written (``RunDir.read_spec`` does not come here), so a resumed old run
builds the sampler it was started with and its sha256 does not change.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from raysweep.config.conditions import conditions
from raysweep.config.schema import AshaScheduler, SweepSpec


def given_options(data: Mapping[str, Any]) -> set[str]:
    """The ``search.options`` keys a raw sweep.json sets."""
    search = data.get("search")
    options = search.get("options") if isinstance(search, Mapping) else None
    return set(options) if isinstance(options, Mapping) else set()


def with_new_defaults(spec: SweepSpec, given: set[str]) -> SweepSpec:
    """``spec`` with the current defaults for every TPE option not in ``given``.

    A strict sweep whose config leaves ``strict_schedule`` unset gets the
    sliding window (search/window.py): TPE as good per trial as with batches
    and no slot left idle at a batch's tail (benchmarks/BENCHMARKS.md). An ASHA
    sweep whose config leaves ``rung_rule`` unset gets the ``rank`` rule
    (``_raycompat/asha_rungs.py``; measured in BENCHMARKS.md).
    """
    if spec.reproducibility.strict and spec.reproducibility.strict_schedule is None:
        repro = spec.reproducibility.model_copy(update={"strict_schedule": "window"})
        spec = spec.model_copy(update={"reproducibility": repro})
    if isinstance(spec.scheduler, AshaScheduler) and spec.scheduler.rung_rule is None:
        scheduler = spec.scheduler.model_copy(update={"rung_rule": "rank"})
        spec = spec.model_copy(update={"scheduler": scheduler})
    options = dict(spec.search.options)
    if spec.search.algorithm == "mf-tpe" and "group" not in given:
        options["group"] = bool(options["multivariate"]) and bool(conditions(spec.space))
        return _with_options(spec, options)
    if spec.search.algorithm != "optuna" or options.get("sampler") != "tpe":
        return spec
    if "multivariate" not in given:  # Optuna: multivariate for one objective only
        options["multivariate"] = len(spec.objective_pairs) == 1
    options.setdefault("constant_liar", True)
    if "group" not in given:  # only multivariate TPE can group
        options["group"] = bool(options["multivariate"]) and bool(conditions(spec.space))
    return _with_options(spec, options)


def _with_options(spec: SweepSpec, options: dict[str, Any]) -> SweepSpec:
    """``spec`` with ``search.options`` replaced (validated again)."""
    if options == spec.search.options:
        return spec
    data = spec.model_dump(mode="json")
    data["search"]["options"] = options
    return SweepSpec.model_validate(data)
