"""What the reports read, gathered from a run directory alone (through RunDir).

``sweep report`` and the end of ``sweep run`` both build the reports from a
:class:`ReportInputs`, so a report regenerated from an unchanged run directory
is the one the run wrote.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from raysweep.config.schema import SweepSpec
from raysweep.errors import SweepError
from raysweep.report.figures import Mark, epoch_ms
from raysweep.report.study import Curves
from raysweep.results.records import SweepResult
from raysweep.rundir import Part, RunDir


@dataclass
class ReportInputs:
    """A run's results with everything the reports show beside them."""

    result: SweepResult
    spec: SweepSpec | None = None
    status: str = "unknown"
    state: dict[str, Any] = field(default_factory=dict)
    parts: list[Part] = field(default_factory=list)
    usage: dict[str, Any] | None = None
    curves: Curves = field(default_factory=dict)
    spec_sha256: str | None = None

    @property
    def commands(self) -> list[dict[str, Any]]:
        """Every command line that drove the run (state.json), oldest first."""
        return [c for c in self.state.get("commands", []) if isinstance(c, dict)]

    def index_marks(self) -> list[Mark]:
        """Where each extension's trials begin, on the trial-index axis."""
        return [(p.start_index - 0.5, p.dir) for p in self.parts[1:]]

    def time_marks(self) -> list[Mark]:
        """When each later invocation (a resume or an extension) started, on time axes."""
        marks: list[Mark] = []
        for n, command in enumerate(self.commands[1:], 2):
            at = epoch_ms(command.get("at"))
            if at is not None:
                marks.append((at, f"{n}: {invocation(command)}"))
        return marks


def invocation(command: dict[str, Any]) -> str:
    """``sweep resume`` / ``sweep run`` from a state.json command record."""
    argv = [str(a) for a in command.get("argv", [])]
    verb = next((a for a in argv[1:] if a in ("run", "resume", "nightly")), None)
    return f"sweep {verb}" if verb else " ".join(argv[:2]) or "?"


def load_inputs(
    run_dir: RunDir, result: SweepResult | None = None, status: str | None = None
) -> ReportInputs:
    """The run's report inputs; ``result`` defaults to its results.json and ``status`` to
    state.json's (the driver passes the status it is about to record)."""
    result = result if result is not None else run_dir.read_results()
    state = run_dir.read_state()
    if status is None:
        status = run_dir.effective_status(state) if state else "unknown"
    try:
        spec: SweepSpec | None = run_dir.read_spec()
    except SweepError:
        spec = None
    return ReportInputs(
        result=result,
        spec=spec,
        status=status,
        state=state,
        parts=run_dir.parts(state),
        usage=run_dir.read_usage(),
        curves=run_dir.trial_curves(result.metric),
        spec_sha256=run_dir.spec_sha256(),
    )
