"""The Pareto front of a multi-objective sweep, for report.html and report.txt.

A scatter of every scored trial on the first two objectives, the Pareto-optimal
ones highlighted and joined in order; with more than two objectives the others
are in each point's hover text. A single-objective sweep gets no figure.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from raysweep.report.pareto import Objectives, objective_values
from raysweep.results.records import TrialRecord


def pareto_figure(trials: Sequence[TrialRecord], objectives: Objectives) -> go.Figure | None:
    """The front against the rest (None for one objective or fewer than 2 scored trials)."""
    if len(objectives) < 2:
        return None
    scored = [t for t in trials if objective_values(t, objectives) is not None]
    if len(scored) < 2:
        return None
    (x_name, x_mode), (y_name, y_mode) = objectives[0], objectives[1]
    front = sorted((t for t in scored if t.pareto_optimal), key=lambda t: t.last[x_name])
    rest = [t for t in scored if not t.pareto_optimal]
    fig = go.Figure()
    for group, name, style in (
        (rest, "dominated", {"color": "#9aa5b1", "size": 7}),
        (front, "Pareto-optimal", {"color": "#1f9d55", "size": 10}),
    ):
        fig.add_trace(
            go.Scatter(
                x=[t.last[x_name] for t in group],
                y=[t.last[y_name] for t in group],
                mode="lines+markers" if group is front else "markers",
                name=name,
                marker=style,
                line={"color": style["color"], "dash": "dot"},
                text=[_hover(t, objectives) for t in group],
                hoverinfo="text",
            )
        )
    fig.update_layout(
        title=f"Pareto front: {x_name} ({x_mode}) against {y_name} ({y_mode})",
        xaxis_title=f"{x_name} ({x_mode})",
        yaxis_title=f"{y_name} ({y_mode})",
        height=440,
        margin={"l": 60, "r": 20, "t": 50, "b": 50},
        legend={"orientation": "h", "y": 1.08},
    )
    return fig


def _hover(trial: TrialRecord, objectives: Objectives) -> str:
    values = ", ".join(f"{m}={trial.last.get(m):.4g}" for m, _ in objectives)
    return f"trial {trial.trial_id} (#{trial.index}): {values}"


def format_front(trials: Sequence[TrialRecord], objectives: Objectives) -> str | None:
    """report.txt's Pareto section (None for a single objective)."""
    if len(objectives) < 2:
        return None
    front = [t for t in trials if t.pareto_optimal]
    names = ", ".join(f"{m} ({d})" for m, d in objectives)
    lines = [f"Pareto front ({len(front)} trials) on {names}:"]
    first, mode = objectives[0]
    front.sort(key=lambda t: (float(t.last[first]) * (1 if mode == "min" else -1), t.index))
    for t in front[:20]:
        values = "  ".join(f"{m}={t.last.get(m):.6g}" for m, _ in objectives)
        lines.append(f"  {t.trial_id:<16} #{t.index:<4} {values}")
    return "\n".join(lines)
