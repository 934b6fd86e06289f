"""Render benchmark results as Markdown and splice them into BENCHMARKS.md.

Each benchmark owns the text between ``<!-- bench:NAME:start -->`` and
``<!-- bench:NAME:end -->``; everything else in the file (hand-written analysis,
other people's sections) is left as it is.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

EN_DASH = "\u2013"
# metric key -> (column label, format)
LABELS: dict[str, tuple[str, str]] = {
    "fit_trials_per_s": ("fit trials/s", ".1f"),
    "process_trials_per_s": ("process trials/s", ".2f"),
    "steady_trials_per_s": ("steady trials/s", ".1f"),
    "fit_s": ("fit s", ".1f"),
    "process_s": ("process s", ".1f"),
    "ray_init_s": ("ray.init s", ".1f"),
    "startup_s": ("start→fit s", ".1f"),
    "teardown_s": ("fit→exit s", ".1f"),
    "first_trial_s": ("start→first trial s", ".1f"),
    "cli_start_s": ("start→ray.init s", ".2f"),
    "fit_to_first_trial_body_s": ("fit→first trial body s", ".2f"),
    "steady_per_trial_s": ("steady s/trial", ".4f"),
    "to_first_trial_start_s": ("fit→first trial start s", ".1f"),
    "to_first_trial_end_s": ("fit→first trial end s", ".1f"),
    "after_last_trial_s": ("last trial end→fit end s", ".1f"),
    "driver_peak_rss_mb": ("driver peak RSS MB", ".0f"),
    "fit_driver_cpu_ms_per_trial": ("driver CPU ms/trial in fit", ".1f"),
    "fit_efficiency": ("efficiency (fit)", ".3f"),
    "process_efficiency": ("efficiency (process)", ".3f"),
    "fit_over_ideal": ("fit / ideal", ".3f"),
    "first_throughput": ("first-window trials/s", ".1f"),
    "last_throughput": ("last-window trials/s", ".1f"),
    "throughput_ratio": ("last/first", ".2f"),
    "best": ("best", ".5g"),
    "compute": ("iterations (total)", ".0f"),
    "compute_to_target": ("iterations to target", ".0f"),
    "compute_fraction": ("compute / random's", ".3f"),
    "compute_fraction_trial_end": ("by trial end", ".3f"),
    "trials_to_target": ("trials to random's best", ".1f"),
    "reached_fraction": ("reached random's best", ".2f"),
    "gpu_util_mean": ("GPU util %", ".0f"),
    "results_per_s": ("results/s", ".0f"),
}


def fmt_summary(summary: Any, fmt: str = ".3g") -> str:
    """``median (min-max)`` with an en dash; the value alone for one sample; ``—`` if missing."""
    if not isinstance(summary, dict):
        return "—" if summary is None else format(summary, fmt)
    if summary.get("median") is None:
        return "—"
    median = format(summary["median"], fmt)
    if summary.get("n", 1) <= 1 or summary["min"] == summary["max"]:
        return median
    return f"{median} ({format(summary['min'], fmt)}{EN_DASH}{format(summary['max'], fmt)})"


def _label(key: str) -> tuple[str, str]:
    return LABELS.get(key, (key.replace("_", " "), ".3g"))


def _variant_table(variants: dict[str, dict[str, Any]]) -> list[str]:
    keys: list[str] = []
    for metrics in variants.values():
        for key, value in metrics.items():
            if isinstance(value, dict) and "median" in value and key not in keys:
                keys.append(key)
    keys = [k for k in keys if any(v.get(k, {}).get("n") for v in variants.values())]
    if not keys:
        return []
    lines = ["| variant | runs | " + " | ".join(_label(k)[0] for k in keys) + " |"]
    lines.append("|---" * (len(keys) + 2) + "|")
    for name, metrics in variants.items():
        runs = metrics.get("runs", "")
        cells = [fmt_summary(metrics.get(k), _label(k)[1]) for k in keys]
        lines.append(f"| {name} | {runs} | " + " | ".join(cells) + " |")
    return lines


def header_line(result: dict[str, Any]) -> str:
    """One line: when, where, with what, and the command that reproduces it."""
    m, v = result.get("machine", {}), result.get("versions", {})
    gpus = ", ".join(m.get("gpus") or []) or "no GPU"
    return (
        f"_{result.get('date')} · {m.get('cpu')} · {m.get('logical_cpus')} CPUs · "
        f"{m.get('memory_gb')} GB · {gpus} · load {m.get('load_avg_1m')} before the run · "
        f"python {v.get('python')}, ray {v.get('ray')}, raysweep {v.get('raysweep')}, "
        f"optuna {v.get('optuna')}, hyperopt {v.get('hyperopt')}, lightgbm {v.get('lightgbm')}_  \n"
        f"Reproduce: `{result.get('command')}`"
    )


def render_section(result: dict[str, Any]) -> str:
    """The Markdown of one benchmark result (figures as median (min-max) over repeats)."""
    name = result["benchmark"]
    lines = [f"<!-- bench:{name}:start -->", f"### {result.get('title', name)}", ""]
    lines += [header_line(result), ""]
    if result.get("skipped"):
        lines += [f"Skipped: {result['skipped']}", ""]
    params = result.get("params") or {}
    if params:
        lines += ["Parameters: " + ", ".join(f"{k} = {v}" for k, v in params.items()), ""]
    # a benchmark that lays out its own body (search_quality) gives it as lines
    table = result.get("section_lines") or _variant_table(result.get("variants") or {})
    if table:
        lines += [*table, ""]
    figures = result.get("figures") or {}
    if figures:  # one line: the ratios the targets read, median (min-max) over repeats
        ratios = [f"{key.replace('_', ' ')} {fmt_summary(summary, '.3g')}"
                  for key, summary in figures.items()]  # fmt: skip
        lines += ["Ratios: " + "; ".join(ratios) + ".", ""]
    # the targets are in the table at the top of the file ("Targets"), not repeated here
    for note in result.get("notes") or []:
        lines.append(f"> {note}")
    if result.get("notes"):
        lines.append("")
    lines.append(f"<!-- bench:{name}:end -->")
    return "\n".join(lines)


def render_summary(result: dict[str, Any]) -> str:
    """A plain-text summary for the terminal."""
    out = [f"== {result.get('title', result['benchmark'])} =="]
    if result.get("skipped"):
        out.append(f"skipped: {result['skipped']}")
    for name, metrics in (result.get("variants") or {}).items():
        cells = [
            f"{_label(k)[0]}={fmt_summary(v, _label(k)[1])}"
            for k, v in metrics.items()
            if isinstance(v, dict) and v.get("n")
        ]
        out.append(f"  {name}: " + ", ".join(cells))
    for key, summary in (result.get("figures") or {}).items():
        out.append(f"  {key}: {fmt_summary(summary)}")
    for t in result.get("targets") or []:
        met = {True: "met", False: "MISSED", None: "not measured"}[t["met"]]
        value = "-" if t["value"] is None else f"{t['value']:.3g}"
        out.append(f"  target {t['name']}: {value} {t['op']} {t['bound']:g} -> {met}")
    return "\n".join(out)


def update_markdown(path: Path, results: list[dict[str, Any]]) -> None:
    """Replace each result's marked section in ``path`` (appending sections not there yet)."""
    text = path.read_text(encoding="utf-8") if path.is_file() else "# raysweep benchmarks\n"
    for result in results:
        name = result["benchmark"]
        section = render_section(result)
        pattern = re.compile(
            rf"<!-- bench:{re.escape(name)}:start -->.*?<!-- bench:{re.escape(name)}:end -->",
            re.DOTALL,
        )
        if pattern.search(text):
            text = pattern.sub(lambda _m, s=section: s, text, count=1)  # type: ignore[misc]
        else:
            text = text.rstrip("\n") + "\n\n" + section + "\n"
    path.write_text(text, encoding="utf-8")


def render_targets(results: list[dict[str, Any]]) -> str:
    """The targets of every benchmark in one table (the summary at the top of the file)."""
    lines = [
        "<!-- bench:targets:start -->",
        "| benchmark | target | measured (median) | goal | met | taken |",
        "|---|---|---|---|---|---|",
    ]
    for result in results:
        title = result.get("title", result["benchmark"])
        if result.get("skipped"):
            lines.append(f"| {title} | — | skipped | — | — | {result.get('date')} |")
        for rows in _grouped(result.get("targets") or []):
            t = rows[0]
            name = t.get("group") or t["name"]
            value = " / ".join("—" if r["value"] is None else f"{r['value']:.3g}{r['unit']}"
                               for r in rows)  # fmt: skip
            lines.append(
                f"| {title} | {name} | {value} | {t['op']} {t['bound']:g}{t['unit']} "
                f"| {_met(rows)} | {t.get('taken') or result.get('date')} |"
            )
    lines.append("<!-- bench:targets:end -->")
    return "\n".join(lines)


def _grouped(targets: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Consecutive targets that share a ``group`` (one row of the table), else one each."""
    out: list[list[dict[str, Any]]] = []
    for t in targets:
        if out and t.get("group") and out[-1][0].get("group") == t["group"]:
            out[-1].append(t)
        else:
            out.append([t])
    return out


def _met(rows: list[dict[str, Any]]) -> str:
    """yes, **no** (with how many of a group missed) or not measured."""
    if any(r["met"] is None for r in rows):
        return "not measured"
    missed = sum(r["met"] is False for r in rows)
    if not missed:
        return "yes"
    return "**no**" if len(rows) == 1 else f"**no** ({missed} of {len(rows)})"


def update_targets(path: Path, results: list[dict[str, Any]]) -> None:
    """Replace (or add, after the title) the targets summary in ``path``.

    Rows of benchmarks without a result here (their JSON is git-ignored, so a fresh
    checkout has none) are kept as they were; the others are replaced in place.
    """
    text = path.read_text(encoding="utf-8") if path.is_file() else "# raysweep benchmarks\n"
    pattern = re.compile(r"<!-- bench:targets:start -->.*?<!-- bench:targets:end -->", re.DOTALL)
    found = pattern.search(text)
    fresh = render_targets(results).splitlines()
    head, rows, tail = fresh[:3], fresh[3:-1], fresh[-1:]
    titles = {r.get("title", r["benchmark"]) for r in results}
    if found:
        kept: list[str] = []
        placed = False
        for line in found.group(0).splitlines()[3:-1]:
            if _row_title(line) not in titles:
                kept.append(line)
            elif not placed:  # the refreshed rows go where the old ones were
                kept.extend(rows)
                placed = True
        rows = kept if placed else kept + rows
    table = "\n".join([*head, *rows, *tail])
    if found:
        text = pattern.sub(lambda _m: table, text, count=1)
    else:
        first, sep, rest = text.partition("\n")
        text = f"{first}{sep}\n{table}\n{rest}"
    path.write_text(text, encoding="utf-8")


def _row_title(line: str) -> str:
    """The benchmark title in a targets-table row (its first cell)."""
    return line.strip().strip("|").split("|", 1)[0].strip()
