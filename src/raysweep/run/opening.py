"""What every run says before its first trial, whichever engine runs it, and ``sweep validate`` too.

* what "the same seed" repeats for this config (``repro/scope.py``);
* what the trainable knows about its data (``trainables/describe.py``: bars, span,
  gaps and folds for ``trading``), also written to repro.json's ``data``;
* warnings about the trainable's settings (a scheduler's ``max_t`` beyond what a
  trial reports).

The lines go to the terminal and sweep_output.log (``RunLog``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from raysweep.repro.scope import repeat_scope
from raysweep.trainables.describe import DataSummary, describe_data, max_t_warning

if TYPE_CHECKING:
    from raysweep.config.schema import SweepSpec
    from raysweep.output_log import RunLog
    from raysweep.rundir import RunDir


def opening_lines(spec: SweepSpec, summary: DataSummary | None) -> list[str]:
    """The data summary, the trainable's warnings, then what the same seed repeats."""
    lines = data_lines(summary)
    warning = max_t_warning(spec)
    if warning:
        lines.append(warning)
    lines.append(repeat_scope(spec))
    return lines


def data_lines(summary: DataSummary | None) -> list[str]:
    """``Data: <first line>``, the others indented, then ``warning: ...`` lines."""
    if summary is None or not summary.lines:
        return []
    first, *rest = summary.lines
    return [
        f"Data: {first}",
        *(f"  {line}" for line in rest),
        *(f"warning: {w}" for w in summary.warnings),
    ]


def announce_opening(spec: SweepSpec, run_dir: RunDir, log: RunLog) -> None:
    """Print :func:`opening_lines` and record the data summary in repro.json."""
    from raysweep.repro.manifest import record_data_summary

    summary = describe_data(spec)
    for line in opening_lines(spec, summary):
        log.print(line)
    if summary is not None:
        change = record_data_summary(run_dir, summary.to_json())
        if change:
            log.print(f"warning: {change}")
