"""report.html's tables: summary header, top-k trials, failures and the parts of the run.

Plain HTML with every value escaped; no link anywhere (a report is opened from
disk, by e-mail, on a machine without network).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from typing import Any

from raysweep.report.inputs import ReportInputs, invocation
from raysweep.report.study import final_value
from raysweep.results.ranking import ranked_by_note
from raysweep.results.records import TrialRecord

TOP_K = 20
FAILURES_SHOWN = 50
ERROR_CHARS = 6000  # the end of a long traceback is the part that says what went wrong


def _num(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return "" if value is None else escape(str(value))


def _cell(value: Any) -> str:
    if isinstance(value, str):
        return escape(value)
    if isinstance(value, float | int) and not isinstance(value, bool):
        return _num(value)
    return escape(json.dumps(value, sort_keys=True, default=str))


def _rows(pairs: Sequence[tuple[str, str]]) -> str:
    return "".join(f"<tr><th>{escape(k)}</th><td>{v}</td></tr>" for k, v in pairs)


def duration(seconds: float | None) -> str:
    """``1h 02m 03s`` / ``2m 13s`` / ``4.2 s``."""
    if seconds is None:
        return "unknown"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m {secs:02d}s" if hours else f"{minutes}m {secs:02d}s"


def summary_table(inputs: ReportInputs) -> str:
    """Sweep, status, trials by status, wall time, best value and config, seed, spec hash."""
    result, spec = inputs.result, inputs.spec
    counts = result.counts()
    by_status = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    best = result.best()
    pairs = [
        ("Sweep", escape(result.name)),
        ("Objective", f"{escape(result.metric)} ({escape(result.mode)})"),
        ("Status", f'<span class="status {escape(inputs.status)}">{escape(inputs.status)}</span>'),
        ("Trials", f"{len(result.trials)} ({escape(by_status) or 'none'})"),
        ("Wall time", escape(duration(result.wall_time_s)) + " (the last invocation)"),
        ("Started", escape(str(inputs.state.get("created_at", "unknown")))),
    ]
    if spec is not None:
        pairs += [
            ("Trainable", escape(spec.trainable)),
            ("Search", f"{escape(spec.search.algorithm)}, scheduler {escape(spec.scheduler.type)}"),
            ("Seed", str(spec.seed)),
        ]
    sha = inputs.spec_sha256
    if sha:
        pairs.append(("Spec sha256", f"<code>{escape(sha)}</code>"))
    if best is None:
        pairs.append(("Best", "none (no trial reported the metric)"))
    else:
        pairs.append(
            (
                "Best",
                f"<b>{_num(result.value(best))}</b> trial {escape(best.trial_id)} "
                f"(#{best.index}, {escape(best.status)}, {best.iterations} iterations, "
                f"seed {best.seed}){ranked_by_note(result.rank_by)}",
            )
        )
        config = json.dumps(best.config, indent=2, sort_keys=True, default=str)
        pairs.append(("Best config", f"<pre>{escape(config)}</pre>"))
    for warning in result.warnings:
        pairs.append(("Warning", f'<span class="warning">{escape(warning)}</span>'))
    return f'<table class="kv">{_rows(pairs)}</table>'


def top_table(inputs: ReportInputs, k: int = TOP_K) -> str:
    """The k best trials with their configs; a click on a heading sorts by that column."""
    result = inputs.result
    ranked = result.ranked()[:k]
    rule = "last value" if result.rank_by == "last" else "best value"
    if not ranked:
        return "<p>No trial reported the metric.</p>"
    keys = sorted({key for t in ranked for key in t.config})
    head = ["rank", "trial", "#", "status", f"best {result.metric}", "final", "iters", "seed"]
    cells = "".join(f"<th>{escape(h)}</th>" for h in [*head, *keys])
    body = []
    for rank, t in enumerate(ranked, 1):
        row = [
            str(rank),
            escape(t.trial_id),
            str(t.index),
            escape(t.status),
            _num(t.best_metric),
            _num(final_value(t, result.metric)),
            str(t.iterations),
            str(t.seed),
        ]
        row += [_cell(t.config[key]) if key in t.config else "" for key in keys]
        body.append("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>")
    caption = f"Top {len(ranked)} of {len(result.ranked())} trials with a value, by their {rule}"
    return (
        f'<table class="sortable"><caption>{escape(caption)} (click a heading to sort)</caption>'
        f"<thead><tr>{cells}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def failures_list(trials: Sequence[TrialRecord]) -> str:
    """Each errored trial with its error text (the last lines of a long one)."""
    errored = [t for t in trials if t.status == "errored"]
    if not errored:
        return "<p>No trial failed.</p>"
    items = []
    for t in errored[:FAILURES_SHOWN]:
        text = (t.error or "no error text was kept").strip()
        last = text.splitlines()[-1] if text else ""
        if len(text) > ERROR_CHARS:
            text = "[...]\n" + text[-ERROR_CHARS:]
        config = json.dumps(t.config, sort_keys=True, default=str)
        items.append(
            f"<details><summary>trial {escape(t.trial_id)} (#{t.index}): "
            f"<code>{escape(last)}</code></summary><p>config: <code>{escape(config)}</code></p>"
            f"<pre>{escape(text)}</pre></details>"
        )
    more = len(errored) - FAILURES_SHOWN
    tail = f"<p>... and {more} more (results.json has every one).</p>" if more > 0 else ""
    return f"<p>{len(errored)} trial(s) failed.</p>" + "".join(items) + tail


def parts_table(inputs: ReportInputs) -> str:
    """The run's Ray Tune experiments and every command that drove it."""
    rows = []
    for p in inputs.parts:
        last = p.start_index + p.trials - 1
        kind = "first run" if p.start_index == 0 else "extension"
        rows.append(
            f"<tr><td>{escape(p.dir)}/</td><td>{kind}</td><td>{p.trials}</td>"
            f"<td>{p.start_index}...{last}</td></tr>"
        )
    experiments = (
        "<table><thead><tr><th>experiment</th><th>part</th><th>trials</th><th>indices</th>"
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )
    commands = "".join(
        f"<tr><td>{n}</td><td>{escape(str(c.get('at', '')))}</td>"
        f"<td>{escape(invocation(c))}</td></tr>"
        for n, c in enumerate(inputs.commands, 1)
    )
    invocations = (
        "<table><thead><tr><th>#</th><th>started (UTC)</th><th>command</th></tr></thead>"
        f"<tbody>{commands}</tbody></table>"
    )
    note = (
        "<p>This run has more than one part: dotted lines in the plots mark where each began "
        "(extensions on the trial-index axis, later invocations on time axes).</p>"
        if len(inputs.parts) > 1 or len(inputs.commands) > 1
        else "<p>One part: a single experiment, run by a single command.</p>"
    )
    return note + experiments + invocations
