"""A prototype of an in-process executor: the bar for running a CPU sweep without Ray.

Not a product path. It drives raysweep's own searcher chain (``build_searcher``:
Ray Tune Searcher objects, trial indices, seeds) and scheduler (``build_scheduler``:
ASHA's decisions) without starting Ray, and trains each trial through raysweep's
built-in GBM code in a thread pool of ``search.max_concurrent`` threads. It answers
the design question for that executor (can Ray Tune's searchers and schedulers be
driven in-process, and at what cost) and prices it against plain Optuna:

    python -m benchmarks.inline_prototype --workload demo
    python -m benchmarks.inline_prototype --workload random200

It writes nothing: no run directory, no resume, no report (what the executor would
add is listed in BENCHMARKS.md, "An in-process executor, prototyped").
"""

from __future__ import annotations

import time

STARTED = time.time()

import argparse  # noqa: E402
import contextlib  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait  # noqa: E402
from typing import Any  # noqa: E402


class _Stopped(Exception):
    """The scheduler stopped the trial at a report."""


class _Trial:
    """What Ray Tune's ASHA reads of a trial: its id."""

    def __init__(self, trial_id: str) -> None:
        self.trial_id = trial_id


def main(argv: list[str] | None = None) -> int:
    """Run one peer workload in-process; print its timings as JSON."""
    from benchmarks.peer_workloads import WORKLOADS

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workload", choices=sorted(WORKLOADS), default="demo")
    args = p.parse_args(argv)

    from ray.tune.schedulers import TrialScheduler

    from raysweep.config.load import parse_spec
    from raysweep.config.schema import is_sampled
    from raysweep.repro.seeds import trial_seed_for
    from raysweep.search.indexed import INDEX_KEY
    from raysweep.search.space import to_param_space
    from raysweep.trainables.context import TrialContext
    from raysweep.trainables.data import load_dataset
    from raysweep.trainables.gbm import fit_gbm
    from raysweep.tuner.build import TIME_ATTR, build_scheduler
    from raysweep.tuner.search_alg import build_searcher

    spec = parse_spec(WORKLOADS[args.workload].config)
    imported = time.time()
    searcher = build_searcher(spec)
    searcher.set_search_properties(spec.metric, spec.mode, to_param_space(spec.space))
    scheduler = build_scheduler(spec)
    scheduler.set_search_properties(spec.metric, spec.mode)
    constants = {k: v for k, v in spec.space.items() if not is_sampled(v)}
    trainable_args = dict(spec.trainable_args)
    dataset = load_dataset(trainable_args, spec.seed)
    lock = threading.Lock()  # the searcher and scheduler are not thread-safe
    ends: list[float] = []
    best: list[float] = []
    reports: list[int] = []  # reports per finished trial

    def run_trial(trial_id: str, config: dict[str, Any]) -> dict[str, Any]:
        index = int(config[INDEX_KEY])
        params = {**constants, **{k: v for k, v in config.items() if k != INDEX_KEY}}
        ctx = TrialContext(index=index, seed=trial_seed_for(spec.seed, index),
                           metric=spec.metric, mode=spec.mode, trainable_args=trainable_args,
                           master_seed=spec.seed)  # fmt: skip
        trial = _Trial(trial_id)
        last: dict[str, Any] = {}

        def report(values: dict[str, Any], _checkpoint: Any) -> None:
            result = {**values, TIME_ATTR: int(last.get(TIME_ATTR, 0)) + 1}
            last.clear()
            last.update(result)
            with lock:
                searcher.on_trial_result(trial_id, result)
                decision = scheduler.on_trial_result(None, trial, result)  # type: ignore[arg-type]
            if decision == TrialScheduler.STOP:
                raise _Stopped

        with lock:
            scheduler.on_trial_add(None, trial)  # type: ignore[arg-type]
        with contextlib.suppress(_Stopped):
            fit_gbm(spec.trainable, params, ctx, dataset, report)  # type: ignore[arg-type]
        return last

    slots = spec.search.max_concurrent or 2
    started = time.time()
    with ThreadPoolExecutor(slots) as pool:
        running: dict[Future[dict[str, Any]], str] = {}
        launched = 0
        while launched < spec.total_trials or running:
            while launched < spec.total_trials and len(running) < slots:
                trial_id = f"t{launched:05d}"
                with lock:
                    config = searcher.suggest(trial_id)
                if config is None:
                    break
                running[pool.submit(run_trial, trial_id, config)] = trial_id
                launched += 1
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                trial_id = running.pop(future)
                result = future.result()
                with lock:
                    searcher.on_trial_complete(trial_id, result)
                    scheduler.on_trial_complete(None, _Trial(trial_id), result)  # type: ignore[arg-type]
                ends.append(time.time())
                reports.append(int(result.get(TIME_ATTR, 0)))
                if spec.metric in result:
                    best.append(float(result[spec.metric]))
    finished = time.time()
    steady = (ends[-1] - ends[len(ends) // 4]) / (len(ends) - 1 - len(ends) // 4)
    pick = min if spec.mode == "min" else max
    import ray

    print(json.dumps({
        "workload": args.workload, "trials": len(ends),
        "start_to_imported_s": round(imported - STARTED, 3),
        "optimize_s": round(finished - started, 3),
        "process_s_to_end": round(finished - STARTED, 3),
        "steady_per_trial_s": round(steady, 4),
        "best": pick(best) if best else None,
        "stopped_early": sum(1 for n in reports if n < max(reports)),
        "ray_started": ray.is_initialized(),
    }))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
