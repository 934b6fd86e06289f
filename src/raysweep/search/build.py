"""The search algorithm a Tuner gets: searcher chain + resumable concurrency limit.

Chain: ``SweepSearch(ConcurrencyLimiter(IndexedSearcher(...inner)))``; the limit is
``search.max_concurrent``, or what fits on the cluster when it is unset. Passing a
SearchGenerator (rather than ``TuneConfig.max_concurrent_trials``) lets a resumed run
change the limit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ray.tune.search import ConcurrencyLimiter, Searcher, SearchGenerator

from raysweep._raycompat.searcher_snapshot import embedded_searcher
from raysweep.config.conditions import conditions
from raysweep.config.schema import SweepSpec, is_sampled
from raysweep.registry import SEARCHERS, lookup
from raysweep.search.conditional import ActiveOnly, native_space
from raysweep.search.continued import continue_searcher
from raysweep.search.indexed import IndexedSearcher
from raysweep.search.space import to_param_space
from raysweep.search.strict import BatchedSearcher
from raysweep.search.strict_schedule import StrictSchedule
from raysweep.search.window import WindowSearcher


class SweepSearch(SearchGenerator):
    """Ray's SearchGenerator whose concurrency limit is a run-time setting.

    Restoring a searcher chain also restores the saved ConcurrencyLimiter's
    ``max_concurrent``; this keeps the value built from the (resumed) spec, so
    ``sweep resume --max-concurrent N`` takes effect. The chain is restored from
    the state saved inside the experiment snapshot the trials come from, when it
    holds one (``_raycompat/searcher_snapshot.py``).
    """

    def restore_from_dir(self, dirpath: str) -> None:
        limiter = self.searcher if isinstance(self.searcher, ConcurrencyLimiter) else None
        wanted = limiter.max_concurrent if limiter is not None else None
        with embedded_searcher(dirpath) as embedded:
            super().restore_from_dir(embedded or dirpath)
        if limiter is not None and wanted is not None:
            limiter.max_concurrent = wanted


def build_searcher(spec: SweepSpec, points: Sequence[Mapping[str, Any]] = ()) -> Searcher:
    """The spec's searcher, wrapped so every suggestion carries its trial index.

    In strict mode the searcher is also windowed or batched
    (``IndexedSearcher(WindowSearcher(inner))``, ``reproducibility.strict_schedule``) so
    suggestions and what the searcher learns do not depend on timing.
    ``points``: warm-start configurations (search/points.py) the searcher suggests
    first, so they take the first trial indices; grid search takes none.
    """
    factory = lookup(SEARCHERS, "search algorithm", spec.search.algorithm)
    space = to_param_space(spec.space)
    if spec.search.algorithm not in ("grid", "random"):
        space = {k: v for k, v in space.items() if is_sampled(spec.space[k])}
    extra: dict[str, Any] = {}
    if spec.search.algorithm in ("optuna", "mf-tpe") and spec.scheduler.type != "fifo":
        extra["full_length"] = spec.iteration_budget  # shorter trials were stopped early
    conds = conditions(spec.space)
    if conds:  # draw only the parameters that exist in each trial
        native = native_space(spec.search.algorithm, spec.space, space)
        if native is not None:
            extra["native_space"] = native
        if spec.search.algorithm == "hyperopt":
            points = ()  # flat points do not fit HyperOpt's nested choices
    objectives = spec.objective_pairs
    several = len(objectives) > 1 and spec.search.algorithm == "optuna"  # random/grid learn nothing
    inner = factory(
        space=space,
        num_samples=spec.search.num_samples,
        seed=spec.seed,
        metric=[m for m, _ in objectives] if several else spec.metric,
        mode=[d for _, d in objectives] if several else spec.mode,
        options=dict(spec.search.options),
        points=() if spec.search.algorithm == "grid" else tuple(points),
        **extra,
    )
    if conds:
        inner = ActiveOnly(inner, conds)
    repro = spec.reproducibility
    if repro.strict and repro.schedule == "window":
        inner = WindowSearcher(inner, window=repro.batch_size, total=spec.total_trials)
    elif repro.strict:
        inner = BatchedSearcher(inner, batch_size=repro.batch_size, total=spec.total_trials)
    return IndexedSearcher(inner)


def innermost(searcher: Searcher | SearchGenerator) -> Searcher:
    """The searcher at the bottom of a wrapper chain (the one that actually suggests)."""
    node: Any = searcher
    while isinstance(getattr(node, "searcher", None), Searcher):
        node = node.searcher
    if not isinstance(node, Searcher):
        raise TypeError(f"no Searcher in {type(searcher).__name__}")
    return node


def build_search_alg(
    spec: SweepSpec,
    start_index: int = 0,
    continued_from: Path | None = None,
    points: Sequence[Mapping[str, Any]] = (),
) -> SweepSearch:
    """The spec's searcher chain, numbering trials from ``start_index``.

    ``continued_from``: an earlier experiment of the run whose searcher the new one
    continues (search/continued.py); used by ``--num-samples`` extensions.
    ``points``: configurations to suggest first (``sweep run --warm-start``).
    """
    searcher = build_searcher(spec, points)
    if isinstance(searcher, IndexedSearcher):
        searcher.next_index = start_index
        strict = searcher.searcher
        if isinstance(strict, StrictSchedule) and start_index:
            # An extension: its own trials, inner ids going on from the earlier part's.
            strict.first = start_index
            strict.total = max(0, (strict.total or 0) - start_index)
    if continued_from is not None:
        continue_searcher(innermost(searcher), spec, continued_from, start_index)
    limit = spec.search.max_concurrent or default_concurrency(spec)
    return SweepSearch(ConcurrencyLimiter(searcher, max_concurrent=limit))


def default_concurrency(spec: SweepSpec) -> int:
    """Trials that fit on the cluster at once when ``search.max_concurrent`` is unset.

    For Hyperband: every trial of the sweep, so its brackets can fill.

    Ray Tune keeps only one trial pending for a custom searcher without a limit,
    which serialises short trials; the limit also sizes the pending-trial queue.
    """
    import ray

    if spec.scheduler.type == "hyperband":
        # Synchronous Hyperband pauses each trial at a rung until its bracket is
        # full: a limit below the bracket size would stall every bracket with
        # paused trials and no trial would ever be stopped early. Pending trials
        # wait in Ray Tune's queue for free slots.
        return max(1, spec.search.num_samples)
    if not ray.is_initialized():
        return 1
    resources = ray.cluster_resources()
    slots = int(resources.get("CPU", 1) // spec.resources.cpus_per_trial)
    gpus = float(resources.get("GPU", 0))
    if spec.resources.gpus_per_trial and gpus:
        slots = min(slots, int(gpus // spec.resources.gpus_per_trial + 1e-9))
    return max(1, slots)
