"""Continue a searcher from an earlier experiment of the same run (``--num-samples`` extension).

Ray cannot add trials to a restored experiment, so an extension is a new
experiment whose searcher starts where the previous one stopped:

1. normally from the previous experiment's saved searcher state
   (``searcher-state-<session>.pkl``, written by Ray with every snapshot): an
   Optuna study or HyperOpt trials object with everything it learned and its
   RNG, or a VariantSearcher's position in its seeded sequence;
2. when that file is missing, by replaying the previous trials: a
   VariantSearcher fast-forwards past ``start_index`` suggestions, a
   model-based searcher gets every previous trial through
   ``Searcher.add_evaluated_point``.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Any

from ray.tune.search import Searcher

from raysweep.config.schema import SweepSpec, is_sampled
from raysweep.search.indexed import INDEX_KEY
from raysweep.search.variants import VariantSearcher

log = logging.getLogger(__name__)


def continue_searcher(inner: Searcher, spec: SweepSpec, previous: Path, start_index: int) -> str:
    """Bring ``inner`` (freshly built from ``spec``) to where ``previous`` left off.

    Returns how it was done: ``"restored"``, ``"fast-forwarded"`` or ``"replayed N trials"``.
    """
    if list(previous.glob(Searcher.CKPT_FILE_TMPL.format("*"))):
        inner.restore_from_dir(str(previous))  # VariantSearcher keeps its new num_samples
        return "restored"
    if isinstance(inner, VariantSearcher):
        inner.emitted = start_index
        return "fast-forwarded"
    replayed = 0
    for config, value, error in _previous_points(spec, previous):
        inner.add_evaluated_point(config, value, error=error)
        replayed += 1
    return f"replayed {replayed} trials"


def _previous_points(spec: SweepSpec, previous: Path) -> list[tuple[dict[str, Any], float, bool]]:
    """(sampled parameters, metric value, errored) of every trial of an earlier experiment."""
    from ray.tune import ExperimentAnalysis

    sampled = {k for k, v in spec.space.items() if is_sampled(v)}
    analysis = ExperimentAnalysis(str(previous), default_metric=spec.metric, default_mode=spec.mode)
    points = []
    for trial in sorted(analysis.trials, key=lambda t: int(t.config.get(INDEX_KEY, 0))):
        config = {k: v for k, v in trial.config.items() if k in sampled}
        value = (trial.metric_analysis or {}).get(spec.metric, {}).get(spec.mode)
        errored = str(trial.status) == "ERROR"
        if not isinstance(value, int | float) or math.isnan(value):
            if not errored:
                continue
            value = math.nan
        points.append((config, float(value), errored))
    return points
