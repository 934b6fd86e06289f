"""Read-only views of run directories for the CLI: report, best, status, list.

Everything here reads through RunDir and never imports Ray, so these commands
answer at once on runs of any size, live or finished.
"""

from __future__ import annotations

import json
import os
import time
from typing import IO, Any

from raysweep.errors import ConfigError, SweepError
from raysweep.jsonio import write_json_atomic
from raysweep.results.formats import best_config_json
from raysweep.results.records import SweepResult, TrialRecord
from raysweep.rundir import RunDir, list_runs, utc_now
from raysweep.status import format_status, run_status


def report_text(run: RunDir) -> str:
    """Regenerate report.txt and report.html from the run directory; returns report.txt.

    An unchanged run directory gives the same files (report.html's ``Generated``
    line aside). Imports plotly and Optuna, never Ray.
    """
    from raysweep.report.build import write_reports

    return write_reports(run)


def best_text(run: RunDir, top: int = 1, export: str | None = None, legacy: bool = False) -> str:
    """The best trial (or the top K) as JSON; optionally exported to a file (export_json).

    A multi-objective sweep prints its Pareto front instead (the export stays the
    first objective's). ``legacy``: the export is written in the previous tool's
    shape (a trading sweep's ``configurations``, ``entry_model``, ``trading_params``:
    report/legacy_export.py). A trading sweep's plain export (nightly.sh's) holds
    those keys too, its ``configurations`` in the legacy ranking.
    """
    result = run.read_results()
    ranked = result.ranked()
    if not ranked:
        raise SweepError(f"{run}: no trial reported {result.metric!r}")
    if export and legacy:
        write_json_atomic(export, legacy_json(run, result, top))
    elif export and _is_trading(run):
        # the workload's own keys too (entry_model, trading_params, ...): what the
        # previous tool's readers of models/best_configs_latest.json expect
        standard = export_json(run, result, ranked[: max(top, 1)])
        write_json_atomic(export, {**standard, **legacy_json(run, result, top)})
    elif export:
        write_json_atomic(export, export_json(run, result, ranked[: max(top, 1)]))
    if any(t.pareto_optimal for t in result.trials):  # several objectives: the Pareto front
        from raysweep.report.pareto import front_json

        return json.dumps(front_json(result.trials, run.read_spec().objective_pairs), indent=2)
    if top <= 1:
        return json.dumps(best_config_json(result, ranked[0]), indent=2)
    return json.dumps([best_config_json(result, t) for t in ranked[:top]], indent=2)


def export_json(run: RunDir, result: SweepResult, top: list[TrialRecord]) -> dict[str, Any]:
    """``sweep best --export``: best_config.json's fields for the best trial, plus the top K.

    ``configurations``/``values``: the top K configs and their metric, best first
    (what ``sweep run --warm-start`` and nightly.sh read); ``run``: the run's name;
    ``generated_at``: UTC time of the export.
    """
    return {
        **best_config_json(result, top[0]),
        "configurations": [t.config for t in top],
        "values": [result.value(t) for t in top],
        "run": run.name,
        "run_dir": str(run.resolved()),
        "generated_at": utc_now(),
    }


def _is_trading(run: RunDir) -> bool:
    return run.has_spec() and run.read_spec().trainable == "trading"


def legacy_json(run: RunDir, result: SweepResult, top: int) -> dict[str, Any]:
    """``sweep best --export FILE --legacy``: ConfigError unless the run is a trading sweep."""
    from raysweep.report.legacy_export import legacy_export

    trainable = run.read_spec().trainable
    if trainable != "trading":
        raise ConfigError(
            f"--legacy: {run.name} is not a trading sweep (trainable {trainable!r}); the "
            "legacy shape holds an entry model and trading parameters"
        )
    return legacy_export(result, run.name, utc_now(), top=max(top, 1))


def status_text(run: RunDir, as_json: bool = False) -> str:
    """Status, counts, best so far, elapsed/ETA and dashboard of a live or finished run.

    A ``running`` run whose driver pid is gone shows as ``crashed`` (raysweep.status).
    """
    info = run_status(run)
    return json.dumps(info, indent=2) if as_json else format_status(info)


def watch_status(run: RunDir, every_s: float, out: IO[str]) -> None:
    """Print the status every ``every_s`` seconds until the run stops running (or Ctrl-C)."""
    clear = "\033[H\033[2J" if out.isatty() else ""
    while True:
        info = run_status(run)
        print(clear + format_status(info), file=out, flush=True)
        if info["status"] != "running":
            return
        if not clear:
            print("", file=out, flush=True)
        time.sleep(every_s)


def list_text(storage: str | os.PathLike[str]) -> str:
    """One line per run under ``storage``: name, status, trials done/planned, best, start time."""
    rows = [("NAME", "STATUS", "TRIALS", "BEST", "STARTED")]
    for run in list_runs(storage):
        try:
            info = run_status(run)
        except SweepError:
            continue
        counts, total, best = info["counts"], info["trials"], info["best"]
        done = sum(n for kind, n in counts.items() if kind not in ("running", "pending"))
        value = best.get("value") if best else None
        shown = f"{best['metric']}={value:.6g}" if isinstance(value, int | float) else "-"
        started = run.read_state().get("created_at") or "-"
        rows.append(
            (run.name, info["status"], f"{done}/{total}" if total else str(done), shown, started)
        )
    if len(rows) == 1:
        return f"no runs under {storage}"
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row[:4], widths, strict=True)) + "  " + row[4]
        for row in rows
    )
