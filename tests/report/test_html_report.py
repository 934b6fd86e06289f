"""report.html and report.txt from a run directory alone: sections, offline, light, stable."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from benchmarks.standalone.report_scale import synthetic_run

from raysweep.report.build import write_reports
from raysweep.rundir import RunDir

SECTIONS = ("summary", "history", "parallel", "importance", "curves", "top", "resources",
            "failures", "parts")  # fmt: skip
PLOTS = {
    "history": ["plot-history-index", "plot-history-time"],
    "parallel": ["plot-parallel"],
    "importance": ["plot-importance", "plot-slice"],
    "curves": ["plot-curves"],
    "resources": ["plot-host", "plot-gpus"],
}
GENERATED = re.compile(r'^<p class="generated">.*$', re.MULTILINE)


def without_plotly_js(html: str) -> str:
    """The page with the embedded plotly.js bundle cut out (our own markup only)."""
    start = html.index('<script type="text/javascript">')
    return html[:start] + html[html.index("</script>", start) :]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> RunDir:
    run_dir = synthetic_run(tmp_path_factory.mktemp("report") / "syn", trials=60, gpus=2)
    write_reports(run_dir)
    return run_dir


def section(html: str, name: str) -> str:
    start = html.index(f'<section id="{name}">')
    return html[start : html.index("</section>", start)]


def test_every_section_with_its_plots(run_dir: RunDir) -> None:
    html = run_dir.html_report_path.read_text()
    for name in SECTIONS:
        body = section(html, name)
        for plot in PLOTS.get(name, []):
            assert f'<div class="plot" id="{plot}">' in body, (name, plot)
            assert f'["{plot}",{{' in html  # its figure is in the script
    summary = section(html, "summary")
    for field in ("Status", "Trials", "Wall time", "Best config", "Seed", "Spec sha256"):
        assert f"<th>{field}</th>" in summary
    assert run_dir.spec_sha256() in summary
    assert "PED-ANOVA" not in section(html, "importance")  # 60 trials: fANOVA
    assert "fANOVA" in section(html, "importance")
    failures = section(html, "failures")
    assert "ValueError: synthetic" in failures and "<details>" in failures
    top = section(html, "top")
    assert '<table class="sortable">' in top and top.count("<tr>") == 21  # heading + top 20
    assert "learning_rate" in top  # the configs


def test_offline_self_contained_and_link_free(run_dir: RunDir) -> None:
    html = run_dir.html_report_path.read_text()
    assert html.count('<script type="text/javascript">') == 1  # plotly.js, once
    own = without_plotly_js(html)
    for fetch in ("src=", "href=", "<link", "@import", "url(", "<a ", "<iframe", "<img"):
        assert fetch not in own, fetch
    assert "data-rendered" in own  # the page says when its plots are drawn


def test_parts_of_an_extended_and_resumed_run_are_marked(run_dir: RunDir) -> None:
    html = run_dir.html_report_path.read_text()
    parts = section(html, "parts")
    assert "tune-ext-1/" in parts and "extension" in parts and "more than one part" in parts
    assert "sweep run" in parts and "sweep resume" in parts  # both invocations listed
    script = html[html.index("var PLOTS=[") :]
    assert '"text":"tune-ext-1"' in script  # the extension marked on the trial-index axis
    assert '"text":"2: sweep resume"' in script  # the resume marked on time axes
    assert "Parts: tune/ (45 trials from #0), tune-ext-1/ (15 trials from #45)" in (
        run_dir.report_path.read_text()
    )


def test_report_txt_has_the_importance_ranking(run_dir: RunDir) -> None:
    text = run_dir.report_path.read_text()
    assert "Parameter importance (fANOVA (optuna.importance.FanovaImportanceEvaluator" in text
    ranking = text[text.index("Parameter importance") :].splitlines()[1:6]
    assert [line.split()[0] for line in ranking] == ["1.", "2.", "3.", "4.", "5."]
    assert "learning_rate" in text[text.index("Parameter importance") :]


def test_regenerated_from_an_unchanged_run_directory_is_identical(run_dir: RunDir) -> None:
    text, html = run_dir.report_path.read_text(), run_dir.html_report_path.read_text()
    assert write_reports(run_dir) == text
    assert run_dir.report_path.read_text() == text
    again = run_dir.html_report_path.read_text()
    assert GENERATED.sub("", again) == GENERATED.sub("", html)
    assert len(GENERATED.findall(html)) == 1


def test_a_big_sweep_stays_light(tmp_path: Path) -> None:
    run_dir = synthetic_run(tmp_path / "big", trials=400, gpus=0)
    write_reports(run_dir)
    html = run_dir.html_report_path.read_text()
    assert "PED-ANOVA (optuna.importance.PedAnovaImportanceEvaluator" in html
    curves = html[html.index('["plot-curves"') :]
    curves = curves[: curves.index('["plot-host"')]
    assert '"name":"completed (' in curves and '"name":"stopped (' in curves  # one trace each
    assert '"bdata"' in curves  # numbers as base64 typed arrays
    assert "No GPU was monitored." in html
    assert run_dir.html_report_path.stat().st_size < 7_000_000


def test_the_trainables_warnings_are_in_results_and_both_reports(tmp_path: Path) -> None:
    run_dir = synthetic_run(tmp_path / "warned", trials=5, gpus=0)
    result = run_dir.read_results()
    result.warnings = ["the best trial, t0, made 2 trade(s) over its validation folds, fewer"]
    run_dir.write_results(result)
    text = write_reports(run_dir)
    assert run_dir.read_results().warnings == result.warnings  # results.json keeps them
    assert text.rstrip().splitlines()[-1] != ""
    assert "\nwarning: the best trial, t0, made 2 trade(s)" in text
    summary = section(run_dir.html_report_path.read_text(), "summary")
    assert '<span class="warning">the best trial, t0, made 2 trade(s)' in summary
