"""report.html: one self-contained page, readable offline.

plotly.js is embedded once, in the head; every figure is a ``Plotly.newPlot`` call
on its own ``<div>`` with a fixed id, so the same run directory gives the same
bytes (the ``Generated`` line aside). Nothing is fetched: no script, font or
style comes from the network, and there is no link to follow. When every plot has
rendered, ``<body data-rendered="N">`` says how many did (the browser test waits
for it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from html import escape

import optuna
import plotly.graph_objects as go
import plotly.io as pio

from raysweep.report.figures import (
    curves_figure,
    history_figure,
    importance_figure,
    parallel_figure,
    slice_figure,
)
from raysweep.report.importance import Importance
from raysweep.report.inputs import ReportInputs
from raysweep.report.pareto_plot import pareto_figure
from raysweep.report.tables import failures_list, parts_table, summary_table, top_table
from raysweep.report.usage_plot import gpu_figure, host_figure

PLOT_CONFIG = {"displaylogo": False, "responsive": True}

STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;
max-width:1280px;padding:0 24px 48px;color:#222}
h1{margin:24px 0 4px}h2{border-bottom:1px solid #ddd;padding-bottom:4px;margin-top:36px}
.generated,.note{color:#666;font-size:90%}table{border-collapse:collapse;margin:8px 0}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top;font-size:90%}
table.kv th{background:#f6f6f6;width:11em}table.sortable th{cursor:pointer;background:#f6f6f6}
table.sortable th[data-order=asc]::after{content:" \\25B2"}
table.sortable th[data-order=desc]::after{content:" \\25BC"}
pre{background:#f6f6f6;padding:8px;overflow-x:auto;font-size:85%;margin:4px 0}
.status.completed{color:#2ca02c}.status.failed,.status.crashed{color:#d62728}
.warning{color:#b35900;font-weight:600}
details{margin:6px 0}caption{text-align:left;color:#666}
"""

SCRIPT = """
function sortBy(th){var t=th.closest("table"),b=t.tBodies[0],i=th.cellIndex,
asc=th.getAttribute("data-order")!=="asc";t.querySelectorAll("th").forEach(function(h){
h.removeAttribute("data-order")});th.setAttribute("data-order",asc?"asc":"desc");
Array.from(b.rows).sort(function(r,s){var x=r.cells[i].textContent,y=s.cells[i].textContent,
nx=parseFloat(x),ny=parseFloat(y),c=(isNaN(nx)||isNaN(ny))?x.localeCompare(y):nx-ny;
return asc?c:-c}).forEach(function(r){b.appendChild(r)})}
document.querySelectorAll("table.sortable th").forEach(function(th){
th.addEventListener("click",function(){sortBy(th)})});
Promise.all(PLOTS.map(function(p){return Plotly.newPlot(p[0],p[1].data,p[1].layout,CONFIG)}))
.then(function(){document.body.setAttribute("data-rendered",String(PLOTS.length))});
"""


@dataclass
class Section:
    """One ``<section>``: a heading, text or tables, and its plots (id, figure or None)."""

    id: str
    title: str
    html: str = ""
    plots: tuple[tuple[str, go.Figure | None, str], ...] = ()  # (div id, figure, if none)


def _script_json(fig: go.Figure) -> str:
    """A figure as JSON that is safe inside ``<script>``."""
    text = pio.to_json(fig, validate=False)
    return text.replace("</", "<\\/").replace("<!--", "<\\!--")


def sections(
    inputs: ReportInputs, importance: Importance | None, study: optuna.Study | None
) -> list[Section]:
    """The report's sections, in page order; ``study``: the trials with a value (scored_study)."""
    result = inputs.result
    curves, cap = curves_figure(result, inputs.curves)
    thinned = f"Curves with more than {cap} points are thinned to {cap}." if cap else ""
    usage = inputs.usage
    no_usage = "Resource usage was not recorded for this run."
    usage_note = (
        '<p class="note">Sampled during the last invocation (each one records its own).</p>'
        if usage and len(inputs.commands) > 1
        else ""
    )
    if importance is not None:
        about = (
            f"Computed by {escape(importance.evaluator)} from {importance.trials} trials that "
            f"reported {escape(result.metric)} (completed or stopped early; each trial's value "
            "is the best it reported). Slice plots show the most important parameters."
        )
    else:
        about = "Importance needs at least 2 trials with a value and a sampled parameter."
    return [
        Section("summary", "Summary", summary_table(inputs)),
        Section(
            "history",
            "Optimisation history",
            '<p class="note">Each trial\'s best value and the best so far; errored trials '
            "are drawn as x at the worst value.</p>",
            (
                (
                    "plot-history-index",
                    history_figure(result, False, inputs.index_marks()),
                    "No trial reported the metric.",
                ),
                (
                    "plot-history-time",
                    history_figure(result, True, inputs.time_marks()),
                    "No trial with a value has an end time.",
                ),
            ),
        ),
        *_pareto_section(inputs),
        Section(
            "parallel",
            "Parameters against the metric",
            '<p class="note">Each line is a trial with a value; axes ordered by importance.</p>',
            (
                (
                    "plot-parallel",
                    parallel_figure(study, importance, result.metric),
                    "No trial has a value.",
                ),
            ),
        ),
        Section(
            "importance",
            "Parameter importance",
            f'<p class="note">{about}</p>',
            (
                ("plot-importance", importance_figure(importance), ""),
                ("plot-slice", slice_figure(study, importance), "No trial has a value."),
            ),
        ),
        Section(
            "curves",
            "Learning curves",
            '<p class="note">Every trial\'s metric per iteration: stopped trials dashed, their '
            f"last point marked x; the best trial thick and green. {thinned}</p>",
            (("plot-curves", curves, "No trial recorded per-iteration results."),),
        ),
        Section("top", "Best trials", top_table(inputs)),
        Section(
            "resources",
            "Resource usage",
            usage_note if usage else f"<p>{no_usage}</p>",
            (
                ("plot-host", host_figure(usage, inputs.time_marks()), no_usage),
                ("plot-gpus", gpu_figure(usage, inputs.time_marks()), "No GPU was monitored."),
            ),
        ),
        Section("failures", "Failures", failures_list(result.trials)),
        Section("parts", "Parts of the run", parts_table(inputs)),
    ]


def _pareto_section(inputs: ReportInputs) -> list[Section]:
    """The Pareto front's section of a multi-objective sweep (none for one objective)."""
    objectives = inputs.spec.objective_pairs if inputs.spec is not None else []
    if len(objectives) < 2:
        return []
    note = (
        '<p class="note">Every trial with a final value of each objective; the '
        "Pareto-optimal ones (no other trial at least as good on every objective and "
        "better on one) in green. The other sections rank by the first objective.</p>"
    )
    figure = pareto_figure(inputs.result.trials, objectives)
    return [
        Section(
            "pareto",
            "Pareto front",
            note,
            (("plot-pareto", figure, "Fewer than 2 trials reported every objective."),),
        )
    ]


def render_html(
    inputs: ReportInputs,
    importance: Importance | None,
    study: optuna.Study | None,
    generated_at: str,
    plotly_js: str,
) -> str:
    """The whole page; ``plotly_js`` is the plotly.js bundle to embed."""
    body, calls = [], []
    for section in sections(inputs, importance, study):
        parts = [f'<section id="{section.id}"><h2>{escape(section.title)}</h2>', section.html]
        for div_id, fig, missing in section.plots:
            if fig is None:
                if missing:
                    parts.append(f'<p class="empty">{escape(missing)}</p>')
                continue
            parts.append(f'<div class="plot" id="{div_id}"></div>')
            calls.append(f'["{div_id}",{_script_json(fig)}]')
        parts.append("</section>")
        body.append("\n".join(p for p in parts if p))
    name = escape(inputs.result.name)
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>raysweep report: {name}</title>",
            f"<style>{STYLE}</style>",
            f'<script type="text/javascript">{plotly_js}</script>',
            "</head><body>",
            f"<header><h1>Sweep {name}</h1>",
            f'<p class="generated">Generated {escape(generated_at)} by raysweep</p></header>',
            *body,
            "<script>",
            f"var CONFIG={json.dumps(PLOT_CONFIG)};",
            "var PLOTS=[" + ",\n".join(calls) + "];",
            SCRIPT,
            "</script>",
            "</body></html>",
            "",
        ]
    )
