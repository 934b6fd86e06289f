"""The one report function: report.txt and report.html of a run, from its run directory.

The end of ``sweep run`` / ``sweep resume`` and ``sweep report`` both call
:func:`write_reports`; everything comes from the run directory (results.json,
spec.json, state.json, resource_usage.json and Ray's per-trial rows), so an
unchanged run directory gives the same files again, apart from report.html's
``Generated`` line. Imports no Ray.
"""

from __future__ import annotations

import plotly.offline

from raysweep.gpu.usage import format_usage_summary
from raysweep.report.html import render_html
from raysweep.report.importance import compute_importance, format_importance
from raysweep.report.inputs import ReportInputs, load_inputs
from raysweep.report.pareto_plot import format_front
from raysweep.report.study import scored_study
from raysweep.report.text import format_report
from raysweep.results.records import SweepResult
from raysweep.rundir import RunDir, utc_now


def build_reports(inputs: ReportInputs, generated_at: str) -> tuple[str, str]:
    """(report.txt, report.html) for ``inputs``."""
    study = scored_study(inputs.spec, inputs.result) if inputs.spec is not None else None
    importance = compute_importance(study)
    sections = [format_importance(importance)]
    objectives = inputs.spec.objective_pairs if inputs.spec is not None else []
    front = format_front(inputs.result.trials, objectives)
    if front:
        sections.insert(0, front)
    if inputs.usage:
        sections.append(format_usage_summary(inputs.usage.get("summary", {})))
    if len(inputs.parts) > 1:
        sections.append(
            "Parts: "
            + ", ".join(f"{p.dir}/ ({p.trials} trials from #{p.start_index})" for p in inputs.parts)
        )
    text = format_report(inputs.result, sections)
    html = render_html(inputs, importance, study, generated_at, plotly.offline.get_plotlyjs())
    return text, html


def write_reports(
    run_dir: RunDir, result: SweepResult | None = None, status: str | None = None
) -> str:
    """Write report.txt and report.html of ``run_dir``; returns report.txt's text.

    ``result`` defaults to results.json and ``status`` to state.json's; the driver
    passes the result it has just written and the status it is about to record.
    """
    inputs = load_inputs(run_dir, result, status)
    text, html = build_reports(inputs, utc_now())
    run_dir.write_report(text)
    run_dir.write_html_report(html)
    return text
