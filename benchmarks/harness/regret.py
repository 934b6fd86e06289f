"""Regret curves of the search-quality benchmark: tables, targets and one PNG per problem.

A run's observations are ``[budget used, wall s, value, regret, fidelity]`` in the
order they were made (runs recorded before the fidelity was have four). The curve is
the true full-fidelity regret of the incumbent after each, under one of two rules:

- ``observed``: the configuration with the best value observed at any fidelity, as
  ``sweep best`` picks under ``rank_by: "best"`` (a low-fidelity value is usually worse
  than the full one, so it rarely wins);
- ``returned``: the best value at the highest fidelity reached so far, which is what
  the peers hand back (Optuna's best trial is a complete one, SMAC3's, DEHB's and
  BOHB's incumbents are at the highest budget) and ``sweep best`` under ``rank_by:
  "last"`` (trading's default: trials cut short rank after complete ones).

They differ where a short run can look better than a long one, as a trading
configuration's first fold can.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

FRACTIONS = (0.10, 0.25, 0.50, 1.00)
RULES = ("observed", "returned")
RETURNED_FRACTIONS = (0.50, 1.00)  # the table's columns under the ``returned`` rule
Run = list[list[float]]


class Incumbent:
    """The incumbent under ``rule`` as observations arrive (``see``)."""

    def __init__(self, rule: str = "observed") -> None:
        if rule not in RULES:
            raise ValueError(f"unknown incumbent rule {rule!r}: one of {RULES}")
        self.rule = rule
        self.value = math.inf
        self.fidelity = -math.inf

    def see(self, value: float, fidelity: float | None) -> bool:
        """Whether an observation of ``value`` at ``fidelity`` becomes the incumbent."""
        if self.rule == "returned":
            if fidelity is None:
                raise ValueError("the 'returned' rule needs each observation's fidelity")
            if fidelity < self.fidelity or (fidelity == self.fidelity and value >= self.value):
                return False
            self.fidelity = fidelity
        elif value >= self.value:
            return False
        self.value = value
        return True


class Incumbents:
    """Every rule's incumbent at once: what a recorder asks before paying for a regret."""

    def __init__(self) -> None:
        self._all = [Incumbent(rule) for rule in RULES]

    def see(self, value: float, fidelity: float) -> bool:
        """Whether the observation becomes the incumbent under any rule (each sees it)."""
        return any([i.see(value, fidelity) for i in self._all])


def has_fidelities(run: Run) -> bool:
    """Whether every observation of ``run`` records its fidelity."""
    return all(len(obs) >= 5 for obs in run)


def _fidelity(obs: Sequence[float]) -> float | None:
    return obs[4] if len(obs) >= 5 else None


def regret_at(run: Run, budget: float, rule: str = "observed") -> float | None:
    """The incumbent's regret after ``budget`` units (None before the first observation)."""
    return _regret_until(run, 0, budget + 1e-9, rule)


def within(run: Run, budget: float) -> Run:
    """The observations made within ``budget`` (a recipe may spend more: cut there)."""
    return [obs for obs in run if obs[0] <= budget + 1e-9] or run[:1]


def regret_at_time(run: Run, seconds: float, rule: str = "observed") -> float | None:
    """The incumbent's regret after ``seconds`` of wall time."""
    return _regret_until(sorted(run, key=lambda r: r[1]), 1, seconds, rule)


def _regret_until(run: Run, column: int, limit: float, rule: str) -> float | None:
    """The regret of the incumbent under ``rule`` over the observations, in order, whose
    ``column`` (0: budget used, 1: wall s) is at most ``limit``."""
    incumbent, regret = Incumbent(rule), None
    for obs in run:
        if obs[column] > limit:
            break
        if incumbent.see(obs[2], _fidelity(obs)):
            regret = obs[3]
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
    """Per optimizer: regret quartiles over seeds at each fraction of the budget; where
    every run records its fidelities, also under the ``returned`` rule at 50 and 100%."""
    out: dict[str, dict[str, Any]] = {}
    for name, seeds in runs.items():
        row: dict[str, Any] = {"runs": len(seeds)}
        columns = [("regret", f, "observed") for f in FRACTIONS]
        if seeds and all(has_fidelities(run) for run in seeds):
            columns += [("returned", f, "returned") for f in RETURNED_FRACTIONS]
        for head, f, rule in columns:
            values = [r for run in seeds if (r := regret_at(run, f * budget, rule)) is not None]
            row[f"{head}_{int(f * 100)}pct"] = quartiles(values)
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
