"""Continue a searcher from an earlier experiment of the same run (``--num-samples`` extension).

Ray cannot add trials to a restored experiment, so an extension is a new
experiment whose searcher starts where the previous one stopped:

1. normally from the previous experiment's saved searcher state
   (``searcher-state-<session>.pkl``, written by Ray with every snapshot, and
   kept inside the snapshot itself, ``_raycompat/searcher_snapshot.py``): an
   Optuna study or HyperOpt trials object with everything it learned and its
   RNG, or a VariantSearcher's position in its seeded sequence;
2. when that file is missing, by replaying the previous trials: a
   VariantSearcher fast-forwards past ``start_index`` suggestions, a
   model-based searcher gets every previous trial through
   ``Searcher.add_evaluated_point``;
3. when the searcher cannot be told earlier trials (Ray's HyperOptSearch has no
   ``add_evaluated_point``; OptunaSearch refuses it for a define-by-run space, which
   a conditional space is), it starts afresh and a warning says so: it learns only
   from the new trials and may suggest configurations already evaluated.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Any

from ray.tune.search import Searcher

from raysweep._raycompat.searcher_snapshot import embedded_searcher
from raysweep.config.schema import SweepSpec, is_sampled
from raysweep.search.indexed import INDEX_KEY
from raysweep.search.variants import VariantSearcher

log = logging.getLogger(__name__)


def continue_searcher(inner: Searcher, spec: SweepSpec, previous: Path, start_index: int) -> str:
    """Bring ``inner`` (freshly built from ``spec``) to where ``previous`` left off.

    Returns how it was done: ``"restored"``, ``"fast-forwarded"``, ``"replayed N trials"``
    or ``"started afresh (...)"``.
    """
    with embedded_searcher(str(previous)) as embedded:  # saved with the last snapshot
        saved = Path(embedded) if embedded else previous
        if list(saved.glob(Searcher.CKPT_FILE_TMPL.format("*"))):
            inner.restore_from_dir(str(saved))  # VariantSearcher keeps its new num_samples
            return "restored"
    if isinstance(inner, VariantSearcher):
        inner.emitted = start_index
        return "fast-forwarded"
    points = _previous_points(spec, previous)
    replayed = 0
    try:
        for config, value, error in points:
            inner.add_evaluated_point(config, value, error=error)
            replayed += 1
    except (NotImplementedError, TypeError) as exc:  # raised before anything was told
        why = str(exc).split(". ")[0] or type(exc).__name__
        how = (
            f"started afresh ({type(inner).__name__} cannot be told the {len(points)} earlier "
            f"trials: {why})"
        )
        log.warning(
            "%s/ holds no saved searcher state (%s): the extension's searcher %s, so it "
            "may suggest configurations already evaluated",
            previous.name,
            Searcher.CKPT_FILE_TMPL.format("*"),
            how,
        )
        return how
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
