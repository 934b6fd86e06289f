"""Regret curves of the search-quality benchmark: what each optimizer returns, tables, PNGs.

A run's observations are ``[budget used, wall s, value, regret, fidelity, own regret]``
in the order they were made (workloads/search_quality_clock.py for the peers,
workloads/search_quality_sweep_record.py for raysweep). What an optimizer returns
after a budget is read from the last observation made within it:

- ``own regret``: the regret of the configuration the optimizer itself would return
  then (a peer's own incumbent, ``sweep best`` under the sweep's ``rank_by``);
- where it names none yet (Optuna before its first complete trial, hpbandster before a
  run on the maximum budget), the fallback, the same for every optimizer: the
  configuration with the best value observed so far at any fidelity (``regret_at``).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

Run = list[list[Any]]
OWN = 5  # the column of the optimizer's own incumbent's regret


def regret_at(run: Run, budget: float) -> float | None:
    """The regret of the best value observed at any fidelity within ``budget`` (None before
    the first observation): the fallback rule."""
    best, regret = float("inf"), None
    for obs in run:
        if obs[0] > budget + 1e-9:
            break
        if obs[2] < best:
            best, regret = obs[2], obs[3]
    return regret


def returned_at(run: Run, budget: float) -> float | None:
    """The regret of what the optimizer returns after ``budget`` units: its own incumbent,
    else the fallback (module docstring); None before the first observation."""
    made = [obs for obs in run if obs[0] <= budget + 1e-9]
    if not made:
        return None
    own = made[-1][OWN] if len(made[-1]) > OWN else None
    return regret_at(run, budget) if own is None else float(own)


def quartiles(values: Sequence[float]) -> dict[str, Any]:
    """Median, first and third quartile (None when there is no value)."""
    kept = sorted(values)
    if not kept:
        return {"median": None, "q1": None, "q3": None, "n": 0, "values": []}
    if len(kept) == 1:
        q1 = q3 = kept[0]
    else:
        q1, _, q3 = statistics.quantiles(kept, n=4, method="inclusive")
    return {"median": statistics.median(kept), "q1": q1, "q3": q3, "n": len(kept),
            "values": kept}  # fmt: skip


def table(runs: Mapping[str, Mapping[int, Run]], budget: float,
          points: Sequence[float]) -> dict[str, dict[str, Any]]:  # fmt: skip
    """Per optimizer: the returned configuration's regret quartiles over seeds per point."""
    out: dict[str, dict[str, Any]] = {}
    for name, seeds in runs.items():
        row: dict[str, Any] = {"runs": len(seeds)}
        for f in points:
            values = [
                r for run in seeds.values() if (r := returned_at(run, f * budget)) is not None
            ]
            row[f"regret_{round(f * 100)}pct"] = quartiles(values)
        out[name] = row
    return out


def markdown_table(rows: Mapping[str, Mapping[str, Any]], points: Sequence[float]) -> list[str]:
    """Median [Q1, Q3] of the returned configuration's regret at each point."""
    heads = [f"{round(f * 100)}%" for f in points]
    lines = ["| optimizer | seeds | " + " | ".join(heads) + " |", "|---" * (len(heads) + 2) + "|"]
    for name, row in rows.items():
        cells = []
        for f in points:
            q = row[f"regret_{round(f * 100)}pct"]
            cells.append("—" if q["median"] is None
                         else f"{q['median']:.3g} [{q['q1']:.3g}, {q['q3']:.3g}]")  # fmt: skip
        lines.append(f"| {name} | {row['runs']} | " + " | ".join(cells) + " |")
    return lines


def final(rows: Mapping[str, Mapping[str, Any]]) -> dict[str, float | None]:
    """Each optimizer's median regret at the whole budget, from :func:`table`'s rows."""
    return {name: row["regret_100pct"]["median"] for name, row in rows.items()}


def plot(problem: str, runs: Mapping[str, Mapping[int, Run]], budget: float, path: Path) -> None:
    """Median regret of what each optimizer returns (IQR shaded) against the budget spent."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axis = plt.subplots(figsize=(9, 5.5))
    colors = plt.get_cmap("tab20").colors
    xs = [budget * i / 100 for i in range(1, 101)]
    positive = True
    for i, (name, seeds) in enumerate(runs.items()):
        med, lo, hi, kept = [], [], [], []
        for x in xs:
            values = [v for run in seeds.values() if (v := returned_at(run, x)) is not None]
            if values and len(values) == len(seeds):
                q = quartiles(values)
                med.append(q["median"])
                lo.append(q["q1"])
                hi.append(q["q3"])
                kept.append(x)
                positive = positive and min(values) > 0
        if kept:
            color = colors[i % len(colors)]
            style = "-" if name.startswith("raysweep") else "--"
            axis.plot(kept, med, style, label=name, color=color)
            axis.fill_between(kept, lo, hi, alpha=0.08, color=color)
    axis.set_xlabel("budget used (fidelity steps); compared on budget, not wall time")
    # held-out regrets are against the best of a reference search, which may be beaten
    axis.set_yscale("log" if positive else "symlog", **({} if positive else {"linthresh": 1e-3}))
    axis.set_ylabel("regret of the configuration returned (median, IQR)")
    axis.grid(True, alpha=0.3)
    axis.legend(fontsize=7, loc="lower left")
    fig.suptitle(f"{problem}: raysweep (solid: sweep run) and peers (dashed)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
