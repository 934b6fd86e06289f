"""Regret curves of the search-quality benchmark: tables, targets and one PNG per problem.

A run's observations are ``[budget used, wall s, value, regret]`` in the order
they were made. The incumbent after each is the configuration with the best
*observed* value so far (what the optimizer itself would return; a low-fidelity
value is higher than the full one, so it rarely wins); the curve is the true
full-fidelity regret of that incumbent.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

FRACTIONS = (0.10, 0.25, 0.50, 1.00)
Run = list[list[float]]


def regret_at(run: Run, budget: float) -> float | None:
    """The incumbent's regret after ``budget`` units (None before the first observation)."""
    best_value, regret = math.inf, None
    for used, _wall, value, true_regret in run:
        if used > budget + 1e-9:
            break
        if value < best_value:
            best_value, regret = value, true_regret
    return regret


def within(run: Run, budget: float) -> Run:
    """The observations made within ``budget`` (a recipe may spend more: cut there)."""
    return [obs for obs in run if obs[0] <= budget + 1e-9] or run[:1]


def regret_at_time(run: Run, seconds: float) -> float | None:
    """The incumbent's regret after ``seconds`` of wall time."""
    best_value, regret = math.inf, None
    for _used, wall, value, true_regret in sorted(run, key=lambda r: r[1]):
        if wall > seconds:
            break
        if value < best_value:
            best_value, regret = value, true_regret
    return regret


def quartiles(values: Sequence[float]) -> dict[str, Any]:
    """Median, first and third quartile (None when there is no value)."""
    kept = sorted(values)
    if not kept:
        return {"median": None, "q1": None, "q3": None, "min": None, "max": None, "n": 0,
                "values": []}  # fmt: skip
    if len(kept) == 1:
        q1 = q3 = kept[0]
    else:
        q1, _, q3 = statistics.quantiles(kept, n=4, method="inclusive")
    return {"median": statistics.median(kept), "q1": q1, "q3": q3, "min": kept[0],
            "max": kept[-1], "n": len(kept), "values": kept}  # fmt: skip


def bootstrap_ci(values: Sequence[float], reps: int = 2000, seed: int = 0) -> tuple[float, float]:
    """95% bootstrap interval of the median."""
    rng = random.Random(seed)
    medians = sorted(statistics.median(rng.choices(values, k=len(values))) for _ in range(reps))
    return medians[int(0.025 * reps)], medians[int(0.975 * reps) - 1]


def table(runs: dict[str, list[Run]], budget: float) -> dict[str, dict[str, Any]]:
    """Per optimizer: regret quartiles over seeds at each fraction of the budget."""
    out: dict[str, dict[str, Any]] = {}
    for name, seeds in runs.items():
        row: dict[str, Any] = {"runs": len(seeds)}
        for f in FRACTIONS:
            values = [r for r in (regret_at(run, f * budget) for run in seeds) if r is not None]
            row[f"regret_{int(f * 100)}pct"] = quartiles(values)
        row["wall_s"] = quartiles([within(run, budget)[-1][1] for run in seeds if run])
        out[name] = row
    return out


def budget_to_reach(seeds: list[Run], bar: float, budget: float, steps: int = 200) -> float | None:
    """The least budget fraction at which the median regret over seeds is <= ``bar``."""
    for i in range(1, steps + 1):
        values = [regret_at(run, budget * i / steps) for run in seeds]
        kept = [v for v in values if v is not None]
        if len(kept) == len(values) and statistics.median(kept) <= bar:
            return i / steps
    return None


def markdown_table(rows: dict[str, dict[str, Any]]) -> list[str]:
    """Median [Q1, Q3] of the regret at 10/25/50/100 % of the budget."""
    heads = [f"{int(f * 100)}%" for f in FRACTIONS]
    lines = ["| optimizer | seeds | " + " | ".join(heads) + " | wall s (median) |",
             "|---" * (len(heads) + 3) + "|"]  # fmt: skip
    for name, row in rows.items():
        cells = []
        for f in FRACTIONS:
            q = row[f"regret_{int(f * 100)}pct"]
            cells.append("—" if q["median"] is None
                         else f"{q['median']:.3g} [{q['q1']:.3g}, {q['q3']:.3g}]")  # fmt: skip
        wall = row["wall_s"]["median"]
        wall_cell = "—" if wall is None else f"{wall:.1f}"
        lines.append(f"| {name} | {row['runs']} | " + " | ".join(cells) + f" | {wall_cell} |")
    return lines


def plot(problem: str, runs: dict[str, list[Run]], budget: float, path: Path) -> None:
    """Median regret (IQR shaded) against budget and against wall time."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (by_budget, by_time) = plt.subplots(1, 2, figsize=(14, 5.5))
    runs = {name: [within(run, budget) for run in seeds] for name, seeds in runs.items()}
    longest = max((run[-1][1] for seeds in runs.values() for run in seeds if run), default=1.0)
    colors = plt.get_cmap("tab20").colors
    for i, (name, seeds) in enumerate(runs.items()):
        style = "-" if name.startswith("raysweep") else "--"
        for axis, xs, at in (
            (by_budget, [budget * i / 100 for i in range(1, 101)], regret_at),
            (by_time, [longest * i / 100 for i in range(1, 101)], regret_at_time),
        ):
            med, lo, hi, kept = [], [], [], []
            for x in xs:
                values = [v for v in (at(run, x) for run in seeds) if v is not None]
                if len(values) == len(seeds) and values:
                    q = quartiles(values)
                    med.append(q["median"])
                    lo.append(q["q1"])
                    hi.append(q["q3"])
                    kept.append(x)
            if kept:
                color = colors[i % len(colors)]
                axis.plot(kept, med, style, label=name, color=color)
                axis.fill_between(kept, lo, hi, alpha=0.08, color=color)
    by_budget.set_xlabel("budget used (fidelity steps)")
    by_time.set_xlabel("wall time (s), until the budget is spent")
    by_time.set_xscale("log")
    # lgbm's regret is against the best of a random search, which an optimizer may beat
    positive = all(obs[3] > 0 for seeds in runs.values() for run in seeds for obs in run)
    for axis in (by_budget, by_time):
        if positive:
            axis.set_yscale("log")
        else:
            axis.set_yscale("symlog", linthresh=1e-3)
        axis.set_ylabel("regret of the incumbent (median, IQR)")
        axis.grid(True, alpha=0.3)
    by_budget.legend(fontsize=7, loc="lower left")
    fig.suptitle(f"{problem}: raysweep recipes (solid: sweep run) and peers (dashed)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
