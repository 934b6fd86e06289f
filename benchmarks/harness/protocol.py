"""The search-quality protocol's scoring (benchmarks/PROTOCOL.md): ratios, paired tests, targets.

Per (problem, budget point): each optimizer's regret per seed is that of the
configuration it would return at that point (``regret.returned_at``); the best peer
is the peer with the lowest median there (chosen per point); the ratio is raysweep's
default's median over that peer's, with no interval widening (0/0 = 1, x/0 = inf);
the paired test is scipy's Wilcoxon signed-rank test of the per-seed regrets (two-sided,
``zero_method="zsplit"``: a seed where both are equal counts half on each side; every
seed equal gives p = 1), beside the seeds where raysweep is lower, equal and higher.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.harness.regret import Run, returned_at

POINTS = (0.10, 0.25, 0.50, 1.00)
ZERO_METHOD = "zsplit"
WITH_FIDELITY_POINTS = (0.25, 0.50, 1.00)  # the with-fidelity target's points
WITHOUT_FIDELITY_POINTS = (0.50, 1.00)
STRICT_BOUND = 1.10
SIGNIFICANCE = 0.05
AHEAD_ON = 2  # problems on which the default must end ahead of every peer


def ratio(ours: float, theirs: float) -> float:
    """``ours / theirs``: 1 where both are 0, infinite for a positive regret over 0."""
    if theirs == 0:
        return 1.0 if ours == 0 else math.inf
    return ours / theirs


def regrets(runs: Mapping[int, Run], budget: float) -> dict[int, float]:
    """Per seed, the regret of what the optimizer returns after ``budget`` (inf: nothing yet)."""
    out = {}
    for seed, run in runs.items():
        regret = returned_at(run, budget)
        out[seed] = math.inf if regret is None else regret
    return out


def wilcoxon_p(ours: Sequence[float], theirs: Sequence[float]) -> float:
    """Two-sided Wilcoxon signed-rank p of paired values (1 where every pair is equal).

    An infinite regret (nothing returned yet) is ranked above every finite one."""
    from scipy.stats import wilcoxon

    finite = [v for v in (*ours, *theirs) if math.isfinite(v)]
    top = 2 * max((abs(v) for v in finite), default=1.0) + 1.0
    a = [v if math.isfinite(v) else top for v in ours]
    b = [v if math.isfinite(v) else top for v in theirs]
    if all(x == y for x, y in zip(a, b, strict=True)):
        return 1.0
    return float(wilcoxon(a, b, zero_method=ZERO_METHOD, alternative="two-sided").pvalue)


def cell(ours: Mapping[int, float], peers: Mapping[str, Mapping[int, float]]) -> dict[str, Any]:
    """One (problem, point): the best peer there, the ratio of medians, the paired test.

    Only the seeds every optimizer ran are compared (paired)."""
    seeds = sorted(set(ours).intersection(*(set(v) for v in peers.values())))
    medians = {name: statistics.median([v[s] for s in seeds]) for name, v in peers.items()}
    best = min(medians, key=lambda name: (medians[name], name))
    a, b = [ours[s] for s in seeds], [peers[best][s] for s in seeds]
    mine = statistics.median(a)
    return {
        "seeds": len(seeds),
        "best_peer": best,
        "peer_median": medians[best],
        "median": mine,
        "ratio": ratio(mine, medians[best]),
        "p": wilcoxon_p(a, b),
        "lower": sum(x < y for x, y in zip(a, b, strict=True)),
        "equal": sum(x == y for x, y in zip(a, b, strict=True)),
        "higher": sum(x > y for x, y in zip(a, b, strict=True)),
        "below_every_peer": all(mine < m for m in medians.values()),
    }


def score(
    default: Mapping[int, Run], peers: Mapping[str, Mapping[int, Run]], budget: float
) -> dict[str, dict[str, Any]]:
    """Per budget point ("10%", ...), the cell of raysweep's default against the peers."""
    out = {}
    for point in POINTS:
        theirs = {name: regrets(runs, point * budget) for name, runs in peers.items() if runs}
        if theirs and default:
            out[f"{round(point * 100)}%"] = cell(regrets(default, point * budget), theirs)
    return out


def targets(cells: Mapping[str, Mapping[str, Mapping[str, Any]]],
            fidelity: Mapping[str, bool]) -> list[dict[str, Any]]:  # fmt: skip
    """The protocol's targets from each problem's cells (``score``), met or missed."""
    from benchmarks.harness.common import target

    out = []
    ahead = []
    for problem, by_point in cells.items():
        points = WITH_FIDELITY_POINTS if fidelity[problem] else WITHOUT_FIDELITY_POINTS
        at = " / ".join(f"{round(p * 100)}%" for p in points)
        group = (f"{problem}: default / best peer at each point, median regret at {at} "
                 "(peers and p: the search-quality table)")  # fmt: skip
        for point in points:
            c = by_point.get(f"{round(point * 100)}%")
            if c is not None:
                peer = c["best_peer"].removeprefix("peer: ")
                row = target(f"{problem}: default / best peer ({peer}) median "
                             f"regret at {round(point * 100)}% (p {c['p']:.2g}, "
                             f"{c['lower']}/{c['equal']}/{c['higher']})", c["ratio"], "<=",
                             1.0)  # fmt: skip
                out.append({**row, "group": group})
        final = by_point.get("100%")
        if fidelity[problem] and final and final["below_every_peer"] and final["p"] < SIGNIFICANCE:
            ahead.append(problem)
    if any(fidelity[p] for p in cells):
        out.append(target(f"problems with a fidelity where the default ends below every peer "
                          f"with p < {SIGNIFICANCE} against the best: {', '.join(ahead) or 'none'}",
                          len(ahead), ">=", AHEAD_ON))  # fmt: skip
    return out


def strict_target(problem: str, strict: Mapping[int, Run], default: Mapping[int, Run],
                  budget: float, slot_use: float | None,
                  protocol_seeds: int | None = None) -> dict[str, Any]:  # fmt: skip
    """Strict mode's cost: its median final regret over the non-strict default's.

    On fewer paired seeds than ``protocol_seeds`` the ratio is shown, not judged.
    """
    from benchmarks.harness.common import target

    seeds = sorted(set(strict) & set(default))
    a = regrets({s: strict[s] for s in seeds}, budget)
    b = regrets({s: default[s] for s in seeds}, budget)
    value = ratio(statistics.median(a.values()), statistics.median(b.values()))
    use = "—" if slot_use is None else f"{slot_use:.3f}"
    short = protocol_seeds is not None and len(seeds) < protocol_seeds
    seen = f"; {len(seeds)} of the protocol's {protocol_seeds} seeds, not judged" if short else ""
    row = target(f"{problem}: strict default / default median regret at 100% "
                 f"(strict slot use {use}{seen})", value, "<=", STRICT_BOUND)  # fmt: skip
    return {**row, "met": None} if short else row
