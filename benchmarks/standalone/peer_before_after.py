"""``sweep run`` of the peer workloads from two source trees, interleaved: before and after.

    git worktree add /tmp/base <commit>
    python -m benchmarks.run peer_before_after --before /tmp/base/src --repeats 3

Prints each tree's median whole-process time and its split (the same clocks as
``benchmarks.suite.peer_optuna``); writes nothing else.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.harness.common import prog
from benchmarks.harness.launch import Launch, launch_sweep, workdir
from benchmarks.suite.overhead import noop_config
from benchmarks.suite.peer_optuna import add_split
from benchmarks.workloads.peer_workloads import WORKLOADS

KEYS = ("process_s", "cli_start_s", "ray_start_s", "fit_to_first_trial_body_s",
        "first_trial_s", "fit_to_first_marker_s", "fit_s", "steady_per_trial_s",
        "teardown_s", "driver_peak_rss_mb")  # fmt: skip


def _value(launch: Launch, key: str) -> float | None:
    if key == "fit_to_first_marker_s":  # the first_trial benchmark's last stage, any tree
        fit_start = launch.extra.get("timings", {}).get("fit_start")
        first = launch.first_trial_s
        return None if fit_start is None or first is None else first - fit_start
    value = getattr(launch, key, None)
    return value if value is not None else launch.extra.get(key)


def _config(workload: str) -> dict[str, Any]:
    """The sweep.json of a peer workload, or of ``noopN``: N no-op trials."""
    if workload.startswith("noop") and workload[4:].isdigit():
        return noop_config("before-after", int(workload[4:]))
    return WORKLOADS[workload].config


def main(argv: Sequence[str] | None = None) -> int:
    """Run each workload from both trees, repeat by repeat, and print the medians."""
    p = argparse.ArgumentParser(prog=prog("peer_before_after"), description=__doc__.splitlines()[0])
    p.add_argument("--before", type=Path, required=True, help="the older tree's src directory")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument(
        "--workloads",
        default="demo,random200",
        help=f"comma-separated: {', '.join(WORKLOADS)}, or noopN (N no-op trials, the "
        "overhead benchmark's sweep)",
    )
    p.add_argument(
        "--after-args",
        default="",
        help="extra `sweep run` arguments for the newer tree only, e.g. '--no-dashboard' "
        "to compare against a tree whose default was no dashboard",
    )
    args = p.parse_args(argv)
    extra = {"before": (), "after": tuple(args.after_args.split())}
    trees = {"before": [args.before], "after": []}
    for name in args.workloads.split(","):
        runs: dict[str, list[Launch]] = {tree: [] for tree in trees}
        for _ in range(args.repeats):
            for tree, path in trees.items():
                with workdir("before-after") as tmp:
                    launch = launch_sweep(
                        tree, _config(name), tmp, args=extra[tree], pythonpath=path
                    )
                    add_split(launch, Path(launch.run_dir or tmp))
                    runs[tree].append(launch)
        for tree, launches in runs.items():
            ok = [x for x in launches if x.returncode == 0]
            cells = []
            for key in KEYS:
                values = [v for v in (_value(x, key) for x in ok) if v is not None]
                cells.append(f"{key}={statistics.median(values):.3f}" if values else f"{key}=-")
            print(f"{name} {tree} ({len(ok)}/{len(launches)} ok): " + " ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
