"""report.txt and the end-of-run summary: plain text a person reads in the morning."""

from __future__ import annotations

import json

from raysweep.results.ranking import ranked_by_note
from raysweep.results.records import SweepResult


def format_summary(result: SweepResult, top: int = 5) -> str:
    """Best trial, its metric and config; counts per status; wall time; the top trials."""
    counts = result.counts()
    lines = [f"Sweep {result.name!r}: {result.metric} ({result.mode})"]
    total = len(result.trials)
    lines.append(
        f"Trials: {total} total, {counts.get('completed', 0)} completed, "
        f"{counts.get('stopped', 0)} stopped early, {counts.get('errored', 0)} errored"
        + (f", {counts['running']} running" if counts.get("running") else "")
        + (f", {counts['pending']} pending" if counts.get("pending") else "")
    )
    if result.wall_time_s is not None:
        lines.append(f"Wall time: {result.wall_time_s:.1f} s")
    best = result.best()
    if best is None:
        lines.append("Best: none (no trial reported the metric)")
    else:
        lines.append(
            f"Best: trial {best.trial_id} (#{best.index}) {result.metric}={result.value(best):.6g} "
            f"after {best.iterations} iterations, seed {best.seed}{ranked_by_note(result.rank_by)}"
        )
        lines.append("Best config: " + json.dumps(best.config, sort_keys=True, default=str))
    ranked = result.ranked()[:top]
    if len(ranked) > 1:
        lines.append("")
        lines.append(f"Top {len(ranked)}:")
        lines.append(
            f"  {'rank':>4}  {'trial':<16} {'#':>4}  {result.metric:>12}  {'iters':>5}  status"
        )
        for rank, t in enumerate(ranked, 1):
            lines.append(
                f"  {rank:>4}  {t.trial_id:<16} {t.index:>4}  {result.value(t):>12.6g}  "
                f"{t.iterations:>5}  {t.status}"
            )
    errored = [t for t in result.trials if t.status == "errored"]
    if errored:
        lines.append("")
        lines.append("Errors:")
        for t in errored[:10]:
            last = (t.error or "").strip().splitlines()
            lines.append(f"  {t.trial_id} (#{t.index}): {last[-1] if last else 'unknown error'}")
    if result.warnings:
        lines.append("")
        lines.extend(f"warning: {warning}" for warning in result.warnings)
    return "\n".join(lines)


def format_report(result: SweepResult, extra_sections: list[str] | None = None) -> str:
    """The whole report.txt."""
    parts = [format_summary(result, top=10)]
    parts.extend(extra_sections or [])
    return "\n\n".join(parts) + "\n"
