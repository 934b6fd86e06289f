"""report.html's plots of the trials: history, importance, Optuna's own plots, learning curves.

Every builder returns a plotly Figure (or None when there is nothing to draw).
Big sweeps stay light: numbers go in as NumPy arrays, which plotly writes as
base64 typed arrays, learning curves of many trials share one trace per status,
and long curves are thinned to a total point budget.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import optuna
import plotly.graph_objects as go
from optuna.distributions import BaseDistribution, CategoricalDistribution

from raysweep.report.importance import Importance
from raysweep.report.study import Curves
from raysweep.results.records import SweepResult, TrialRecord

COLORS = {"completed": "#1f77b4", "stopped": "#ff7f0e", "errored": "#d62728", "best": "#2ca02c"}
PER_TRIAL_TRACES_MAX = 60  # above this, learning curves share one trace per status
CURVE_POINTS_BUDGET = 400_000  # learning-curve points in the whole report
MIN_POINTS_PER_TRIAL = 10
SLICE_PARAMS = 3
Mark = tuple[float, str]  # (x position, label): a vertical line marking a part of the run


def epoch_ms(iso: str | None) -> float | None:
    """An ISO-8601 UTC time as milliseconds since the epoch (plotly's date axis unit)."""
    if not iso:
        return None
    moment = datetime.strptime(iso, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    return moment.timestamp() * 1000.0


def _layout(fig: go.Figure, title: str, x: str, y: str, height: int = 420) -> go.Figure:
    fig.update_layout(
        title=title,
        xaxis_title=x,
        yaxis_title=y,
        height=height,
        margin={"l": 60, "r": 20, "t": 50, "b": 50},
        legend={"orientation": "h", "x": 1, "y": 1.02, "xanchor": "right", "yanchor": "bottom"},
        template="plotly_white",
    )
    return fig


def add_marks(fig: go.Figure, marks: Sequence[Mark]) -> None:
    """Vertical dotted lines with a label: where each part of an extended or resumed run began."""
    for x, label in marks:
        fig.add_vline(x=x, line={"dash": "dot", "color": "#7f7f7f", "width": 1})
        fig.add_annotation(
            x=x,
            y=0.99,
            yref="paper",
            text=label,
            showarrow=False,
            xanchor="left",
            yanchor="top",
            bgcolor="rgba(255,255,255,0.8)",
        )


def _best_so_far(values: np.ndarray, mode: str) -> np.ndarray:
    filled = np.where(np.isnan(values), np.inf if mode == "min" else -np.inf, values)
    best = np.minimum.accumulate(filled) if mode == "min" else np.maximum.accumulate(filled)
    return np.where(np.isinf(best), np.nan, best)


def history_figure(
    result: SweepResult, by_time: bool = False, marks: Sequence[Mark] = ()
) -> go.Figure | None:
    """Each trial's value (by status) and the best so far, against trial index or end time."""
    trials = [t for t in result.trials if not by_time or epoch_ms(t.ended_at) is not None]
    if by_time:
        trials.sort(key=lambda t: (epoch_ms(t.ended_at) or 0.0, t.index))
    values = [result.value(t) for t in trials]  # the value that ranks each trial
    if not any(v is not None for v in values):
        return None
    x = np.array([epoch_ms(t.ended_at) if by_time else t.index for t in trials], dtype="f8")
    y = np.array([np.nan if v is None else v for v in values], dtype="f8")
    fig = go.Figure()
    for status in ("completed", "stopped"):
        keep = np.array([t.status == status for t in trials]) & ~np.isnan(y)
        if keep.any():
            fig.add_scatter(
                x=x[keep],
                y=y[keep],
                mode="markers",
                name=status,
                marker_color=COLORS[status],
                hovertemplate=f"{status} #%{{customdata}}: %{{y:.6g}}<extra></extra>",
                customdata=np.array([t.index for t in trials])[keep],
            )
    errored = [i for i, t in enumerate(trials) if t.status == "errored"]
    if errored:
        floor = float(np.nanmin(y)) if result.mode == "max" else float(np.nanmax(y))
        fig.add_scatter(
            x=x[errored],
            y=np.full(len(errored), floor),
            mode="markers",
            name="errored",
            marker={"color": COLORS["errored"], "symbol": "x"},
            hovertemplate="errored #%{customdata}<extra></extra>",
            customdata=np.array([trials[i].index for i in errored]),
        )
    fig.add_scatter(
        x=x,
        y=_best_so_far(y, result.mode),
        mode="lines",
        name="best so far",
        line={"color": COLORS["best"], "shape": "hv"},
        connectgaps=True,
        hovertemplate="best so far: %{y:.6g}<extra></extra>",
    )
    title = "Optimisation history against " + ("wall time" if by_time else "trial index")
    _layout(fig, title, "trial end time (UTC)" if by_time else "trial index", result.metric)
    if by_time:
        fig.update_xaxes(type="date")
    add_marks(fig, marks)
    return fig


def importance_figure(importance: Importance | None) -> go.Figure | None:
    """Horizontal bars of the parameters' importance, the most important on top."""
    if importance is None:
        return None
    names = list(importance.values)[::-1]
    fig = go.Figure(
        go.Bar(
            x=np.array([importance.values[n] for n in names]),
            y=names,
            orientation="h",
            hovertemplate="%{y}: %{x:.3f}<extra></extra>",
            marker_color=COLORS["completed"],
        )
    )
    height = 160 + 28 * len(names)
    return _layout(fig, "Parameter importance", "importance (sums to 1)", "", height)


def parallel_figure(
    study: optuna.Study | None, importance: Importance | None, metric: str
) -> go.Figure | None:
    """Parallel coordinates of the trials with a value: the metric, then each parameter
    (most important first). One Parcoords trace, so 10,000 trials stay light; log-scaled
    parameters get a log axis, categorical ones their choices as ticks."""
    if study is None:
        return None
    trials = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    names = list(importance.values) if importance else sorted({p for t in trials for p in t.params})
    trials = [t for t in trials if all(n in t.params for n in names)]
    if not trials or not names:
        return None
    values = np.array([t.value for t in trials], dtype="f8")
    dims = [{"label": metric, "values": values}]
    for name in names:
        dims.append(
            _dimension(name, [t.params[name] for t in trials], trials[0].distributions[name])
        )
    reverse = study.direction == optuna.study.StudyDirection.MINIMIZE
    fig = go.Figure(
        go.Parcoords(
            dimensions=dims,
            line={"color": values, "colorscale": "Viridis", "reversescale": reverse,
                  "showscale": True, "colorbar": {"title": metric}},
        )
    )  # fmt: skip
    _layout(fig, "Parameters against the metric", "", "", 520)
    return fig.update_layout(margin={"t": 110, "l": 60, "r": 60, "b": 40})  # room for axis labels


def _dimension(name: str, values: list[Any], dist: BaseDistribution) -> dict[str, Any]:
    """One parallel-coordinate axis: categorical as indices, log-scaled as log10 ticks."""
    if isinstance(dist, CategoricalDistribution):
        labels = [str(c) for c in dist.choices]
        codes = np.array([dist.choices.index(v) for v in values], dtype="f8")
        return {"label": name, "values": codes, "tickvals": list(range(len(labels))),
                "ticktext": labels}  # fmt: skip
    numbers = np.array(values, dtype="f8")
    if getattr(dist, "log", False):
        logs = np.log10(numbers)
        ticks = np.arange(math.floor(logs.min()), math.ceil(logs.max()) + 1)
        return {"label": f"{name} (log)", "values": logs, "tickvals": ticks.tolist(),
                "ticktext": [f"{10.0**k:g}" for k in ticks]}  # fmt: skip
    return {"label": name, "values": numbers}


def slice_figure(study: optuna.Study | None, importance: Importance | None) -> go.Figure | None:
    """Optuna's slice plots of the most important parameters (the first ones without importance)."""
    if study is None:
        return None
    names = list(importance.values) if importance else sorted(study.trials[0].params)
    fig = optuna.visualization.plot_slice(study, params=names[:SLICE_PARAMS])
    return _compact(_layout(fig, "Slices of the most important parameters", "", "", 420))


def _compact(fig: go.Figure) -> go.Figure:
    """Numeric lists in Optuna's figures as NumPy arrays (base64 in the HTML)."""
    for trace in fig.data:
        for key in ("x", "y"):
            values = getattr(trace, key, None)
            if isinstance(values, list | tuple) and values and all(map(_number, values)):
                setattr(trace, key, np.asarray(values, dtype="f8"))
    return fig


def _number(value: Any) -> bool:
    return isinstance(value, int | float | np.number) and not isinstance(value, bool)


def _thin(points: Sequence[tuple[int, float]], keep: int) -> Sequence[tuple[int, float]]:
    if len(points) <= keep:
        return points
    picks = np.unique(np.linspace(0, len(points) - 1, keep).round().astype(int))
    return [points[i] for i in picks]


def curves_figure(result: SweepResult, curves: Curves) -> tuple[go.Figure | None, int | None]:
    """Metric against iteration for every trial; stopped trials dashed and ended with an x,
    the best trial drawn on top. Returns the figure and the per-trial point cap (None: all)."""
    drawn = [t for t in result.trials if curves.get(t.trial_id)]
    if not drawn:
        return None, None
    cap = max(MIN_POINTS_PER_TRIAL, CURVE_POINTS_BUDGET // len(drawn))
    thinned = {t.trial_id: _thin(curves[t.trial_id], cap) for t in drawn}
    best = result.best()
    fig = go.Figure()
    if len(drawn) <= PER_TRIAL_TRACES_MAX:
        _per_trial(fig, drawn, thinned)
    else:
        _grouped(fig, drawn, thinned)
    _stop_marks(fig, [t for t in drawn if t.status == "stopped"], thinned)
    if best is not None and best.trial_id in thinned:
        xs, ys = zip(*thinned[best.trial_id], strict=True)
        fig.add_scatter(
            x=np.array(xs, dtype="f8"),
            y=np.array(ys, dtype="f8"),
            mode="lines+markers",
            name=f"best: #{best.index} {best.trial_id}",
            line={"color": COLORS["best"], "width": 4},
            hovertemplate=f"best #{best.index}: %{{y:.6g}} at %{{x}}<extra></extra>",
        )
    _layout(fig, "Learning curves", "training iteration", result.metric, 480)
    return fig, (cap if any(len(curves[t.trial_id]) > cap for t in drawn) else None)


def _style(status: str) -> dict[str, Any]:
    color = COLORS.get(status, "#7f7f7f")
    return {"color": color, "width": 1, "dash": "dash" if status == "stopped" else "solid"}


def _per_trial(fig: go.Figure, trials: Sequence[TrialRecord], points: Mapping[str, Any]) -> None:
    shown: set[str] = set()
    for t in trials:
        xs, ys = zip(*points[t.trial_id], strict=True)
        fig.add_scatter(
            x=np.array(xs, dtype="f8"),
            y=np.array(ys, dtype="f8"),
            mode="lines",
            name=t.status,
            legendgroup=t.status,
            showlegend=t.status not in shown,
            line=_style(t.status),
            opacity=0.6,
            hovertemplate=f"#{t.index} {t.trial_id} ({t.status}): "
            + "%{y:.6g} at %{x}<extra></extra>",
        )
        shown.add(t.status)


def _grouped(fig: go.Figure, trials: Sequence[TrialRecord], points: Mapping[str, Any]) -> None:
    for status in ("completed", "stopped", "errored", "running"):
        group = [points[t.trial_id] for t in trials if t.status == status]
        if not group:
            continue
        xs = np.concatenate([np.append(np.array([p[0] for p in g], "f4"), np.nan) for g in group])
        ys = np.concatenate([np.append(np.array([p[1] for p in g], "f4"), np.nan) for g in group])
        fig.add_scatter(
            x=xs,
            y=ys,
            mode="lines",
            name=f"{status} ({len(group)})",
            line=_style(status),
            opacity=0.35,
            hovertemplate=f"{status}: %{{y:.6g}} at %{{x}}<extra></extra>",
        )


def _stop_marks(fig: go.Figure, stopped: Sequence[TrialRecord], points: Mapping[str, Any]) -> None:
    if not stopped:
        return
    ends = [points[t.trial_id][-1] for t in stopped]
    fig.add_scatter(
        x=np.array([e[0] for e in ends], "f8"),
        y=np.array([e[1] for e in ends], "f8"),
        mode="markers",
        name="stopped early here",
        marker={"symbol": "x", "color": COLORS["stopped"]},
        customdata=np.array([t.index for t in stopped]),
        hovertemplate="#%{customdata} stopped at %{x}: %{y:.6g}<extra></extra>",
    )
