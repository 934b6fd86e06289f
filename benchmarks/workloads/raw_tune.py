"""A raw Ray Tune script, as a user would write it: the baseline ``sweep run`` is measured against.

    python -m benchmarks.workloads.raw_tune --trainable benchmarks.workloads.trainables:noop \\
        --num-samples 200 --cpus 2 --storage /tmp/raw [--reuse-actors] [--timings t.json]

Default settings except what the flags say: BasicVariantGenerator (random
sampling of a uniform ``x``), default loggers and output, ``reuse_actors``
False unless ``--reuse-actors``. Never imports raysweep.
"""

from __future__ import annotations

import time

STARTED = time.time()

import argparse  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402


def _load(ref: str) -> Callable[[dict[str, Any]], Any]:
    module, _, name = ref.partition(":")
    func: Callable[[dict[str, Any]], Any] = getattr(importlib.import_module(module), name)
    return func


def main(argv: list[str] | None = None) -> int:
    """Run one raw Ray Tune sweep; write its timings as JSON when asked."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trainable", required=True, help="module:function")
    parser.add_argument("--num-samples", type=int, required=True)
    parser.add_argument("--cpus", type=int, default=2)
    parser.add_argument("--storage", required=True)
    parser.add_argument("--name", default="raw")
    parser.add_argument("--reuse-actors", action="store_true")
    parser.add_argument("--sleep-s", type=float, default=None, help="constant sleep_s")
    parser.add_argument("--timings", help="write timings here (JSON)")
    args = parser.parse_args(argv)

    import ray
    from ray import tune

    trainable = _load(args.trainable)
    ray_start = time.time()
    # A Ray of its own, as sweep run starts: a plain ray.init() joins any Ray already
    # running on the machine (another sweep, a test run) and then refuses num_cpus.
    ray.init(address="local", num_cpus=args.cpus)
    ray_end = time.time()
    space: dict[str, Any] = {"x": tune.uniform(0.0, 1.0)}
    if args.sleep_s is not None:
        space["sleep_s"] = args.sleep_s
    tuner = tune.Tuner(
        trainable,
        param_space=space,
        tune_config=tune.TuneConfig(
            metric="loss", mode="min", num_samples=args.num_samples, reuse_actors=args.reuse_actors
        ),
        run_config=tune.RunConfig(name=args.name, storage_path=args.storage),
    )
    fit_start = time.time()
    grid = tuner.fit()
    fit_end = time.time()
    errors = sum(1 for i in range(len(grid)) if grid[i].error is not None)
    if args.timings:
        with open(args.timings, "w", encoding="utf-8") as fh:
            json.dump(
                {
                    "started": STARTED,
                    "ray_start": ray_start,
                    "ray_end": ray_end,
                    "fit_start": fit_start,
                    "fit_end": fit_end,
                    "trials": len(grid),
                    "errors": errors,
                },
                fh,
            )
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
