"""Strict mode's schedules on a simulated clock: the real searcher chain, many seeds, no Ray.

``sweep run`` of the search-quality recipes takes a minute per seed here, and 5 seeds
cannot tell a 10% regret difference from noise. This drives the searcher chain the
sweep builds (``search.build.build_searcher``: TPE in Ray's OptunaSearch, wrapped
for strict mode) over the same multi-fidelity Hartmann problems at full fidelity, with
``--slots`` trials at once whose durations are drawn from the seed (0.5 to 1.5 units),
for every recipe of ``--recipes`` and ``--seeds`` seeds. A strict recipe suggests
exactly what its ``sweep run`` does (its configs do not depend on timing); TPE without
strict mode depends on the order in which trials end, here the simulated one.

Per recipe: the median final regret over the seeds, its ratio to the recipe without
strict mode with a 95% bootstrap interval (seeds paired), and the slots' use (busy
slot time over ``slots`` x the sweep's length: 1.0 is no slot ever waiting).
"""

from __future__ import annotations

import argparse
import heapq
import random
import statistics
import sys
from collections.abc import Sequence
from typing import Any

from benchmarks.harness.common import prog
from benchmarks.workloads.search_quality_problems import PROBLEMS
from benchmarks.workloads.search_quality_recipes import RECIPES

DEFAULT_RECIPES = ("tpe", "tpe strict batch 4", "tpe strict window 4", "tpe strict window 2")


def simulate(recipe: str, problem: str, seed: int, trials: int, slots: int) -> tuple[float, float]:
    """(final regret of the incumbent, slot use) of one simulated sweep."""
    from raysweep.config.load import parse_spec
    from raysweep.search.build import build_searcher

    mfh = PROBLEMS[problem]
    spec = parse_spec(RECIPES[recipe](mfh, seed, trials))
    searcher = build_searcher(spec)
    # the sweep's own metric and direction (trading maximizes its composite): TPE's
    # suggestions depend on the direction it is told, so it is told the sweep's
    searcher.set_search_properties(spec.metric, spec.mode, {})
    sign = -1.0 if spec.mode == "max" else 1.0  # the problem's value is minimized
    durations = random.Random(seed)
    live: list[tuple[float, int, dict[str, Any]]] = []
    clock = busy = 0.0
    started = 0
    best: tuple[float, float] | None = None
    while started < spec.total_trials or live:
        while len(live) < slots and started < spec.total_trials:
            config = searcher.suggest(f"t{started}")
            if not isinstance(config, dict):
                break  # strict mode: the slot waits for the next trial to end
            length = durations.uniform(0.5, 1.5)
            busy += length
            heapq.heappush(live, (clock + length, started, config))
            started += 1
        clock, index, config = heapq.heappop(live)
        value = mfh.value(config, mfh.max_fidelity)
        result = {spec.metric: sign * value, "training_iteration": mfh.max_fidelity}
        searcher.on_trial_complete(f"t{index}", result)
        if best is None or value < best[0]:
            best = (value, mfh.regret(config))
    assert best is not None
    return best[1], busy / (slots * clock)


def ratio_interval(pairs: list[tuple[float, float]], draws: int = 2000) -> tuple[float, float]:
    """95% bootstrap interval of median(a) / median(b) over seed-paired (a, b)."""
    rng = random.Random(0)
    ratios = []
    for _ in range(draws):
        sample = [rng.choice(pairs) for _ in pairs]
        ratios.append(statistics.median(a for a, _ in sample) /
                      statistics.median(b for _, b in sample))  # fmt: skip
    ratios.sort()
    return ratios[int(0.025 * draws)], ratios[int(0.975 * draws) - 1]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog=prog("strict_schedules"), description=__doc__.splitlines()[0])
    p.add_argument("--problems", default="mfh3,mfh6", help=f"subset of {sorted(PROBLEMS)}")
    p.add_argument("--recipes", default=",".join(DEFAULT_RECIPES),
                   help="search-quality recipes; the first is the one the others are "
                   "compared with")  # fmt: skip
    p.add_argument("--seeds", type=int, default=100, help="seeds 1..N")
    p.add_argument("--trials", type=int, default=20, help="full-fidelity trials per sweep")
    p.add_argument("--slots", type=int, default=2, help="trials at once")
    args = p.parse_args(argv)
    recipes = args.recipes.split(",")
    unknown = [r for r in recipes if r not in RECIPES]
    unknown += [x for x in args.problems.split(",") if x not in PROBLEMS]
    if unknown:
        p.error(f"unknown recipe or problem: {unknown}")
    print(f"{args.seeds} seeds, {args.trials} trials, {args.slots} slots\n")
    print(f"| problem | recipe | median final regret | / {recipes[0]} [95% CI] | slot use |")
    print("|---|---|---|---|---|")
    for problem in args.problems.split(","):
        runs = {r: [simulate(r, problem, s, args.trials, args.slots)
                    for s in range(1, args.seeds + 1)] for r in recipes}  # fmt: skip
        base = [regret for regret, _ in runs[recipes[0]]]
        for recipe, got in runs.items():
            regrets = [regret for regret, _ in got]
            ratio = statistics.median(regrets) / statistics.median(base)
            low, high = ratio_interval(list(zip(regrets, base, strict=True)))
            use = statistics.median(u for _, u in got)
            print(f"| {problem} | {recipe} | {statistics.median(regrets):.3g} | "
                  f"{ratio:.2f} [{low:.2f}, {high:.2f}] | {use:.3f} |", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
