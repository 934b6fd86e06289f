"""report.html's resource-usage plots, from resource_usage.json (gpu/monitor.py's samples).

A sample is ``{"t": epoch_s, "cpu_pct", "ram_used_mb", "ram_total_mb", "gpus":
[{"index", "util_pct", "mem_used_mb", "mem_total_mb"}], "n"?}``; merged samples
(``n`` > 1) are drawn like any other, at their own time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from raysweep.report.figures import Mark, add_marks

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf")


def _series(samples: Sequence[dict[str, Any]], key: str) -> np.ndarray:
    return np.array([np.nan if s.get(key) is None else s[key] for s in samples], dtype="f8")


def _times(samples: Sequence[dict[str, Any]]) -> np.ndarray:
    return np.array([float(s["t"]) * 1000.0 for s in samples], dtype="f8")


def _frame(fig: go.Figure, title: str, left: str, right: str) -> go.Figure:
    fig.update_layout(
        title=title,
        height=380,
        margin={"l": 60, "r": 60, "t": 50, "b": 50},
        legend={"orientation": "h", "x": 1, "y": 1.02, "xanchor": "right", "yanchor": "bottom"},
        template="plotly_white",
        xaxis={"type": "date", "title": "time (UTC)"},
        yaxis={"title": left, "rangemode": "tozero"},
        yaxis2={"title": right, "overlaying": "y", "side": "right", "rangemode": "tozero"},
    )
    return fig


def host_figure(usage: dict[str, Any] | None, marks: Sequence[Mark] = ()) -> go.Figure | None:
    """CPU utilisation (%) and RAM in use (GiB) over the run."""
    samples = [s for s in (usage or {}).get("samples", []) if s.get("t") is not None]
    if not samples:
        return None
    t = _times(samples)
    fig = go.Figure()
    fig.add_scatter(
        x=t,
        y=_series(samples, "cpu_pct"),
        name="CPU %",
        mode="lines",
        hovertemplate="CPU %{y:.1f}%<extra></extra>",
    )
    fig.add_scatter(
        x=t,
        y=_series(samples, "ram_used_mb") / 1024.0,
        name="RAM used (GiB)",
        mode="lines",
        yaxis="y2",
        line={"dash": "dot"},
        hovertemplate="RAM %{y:.2f} GiB<extra></extra>",
    )
    add_marks(fig, marks)
    return _frame(fig, "Host: CPU and RAM", "CPU utilisation (%)", "RAM used (GiB)")


def gpu_figure(usage: dict[str, Any] | None, marks: Sequence[Mark] = ()) -> go.Figure | None:
    """Per GPU: utilisation (%) and memory in use (GiB) over the run."""
    samples = [s for s in (usage or {}).get("samples", []) if s.get("t") is not None]
    indices = sorted({int(g["index"]) for s in samples for g in s.get("gpus") or ()})
    if not indices:
        return None
    t = _times(samples)
    fig = go.Figure()
    for n, index in enumerate(indices):
        rows = [{g["index"]: g for g in s.get("gpus") or ()}.get(index, {}) for s in samples]
        color = PALETTE[n % len(PALETTE)]
        fig.add_scatter(
            x=t,
            y=_series(rows, "util_pct"),
            name=f"GPU {index} util %",
            mode="lines",
            line={"color": color},
            hovertemplate=f"GPU {index}: %{{y:.0f}}%<extra></extra>",
        )
        fig.add_scatter(
            x=t,
            y=_series(rows, "mem_used_mb") / 1024.0,
            name=f"GPU {index} memory (GiB)",
            mode="lines",
            yaxis="y2",
            line={"color": color, "dash": "dot"},
            hovertemplate=f"GPU {index}: %{{y:.2f}} GiB<extra></extra>",
        )
    add_marks(fig, marks)
    return _frame(fig, "GPUs: utilisation and memory", "utilisation (%)", "memory used (GiB)")
