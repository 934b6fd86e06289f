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


def report_text(run_dir: RunDir) -> str:
    """Regenerate report.txt and report.html from the run directory; returns report.txt.

    An unchanged run directory gives the same files (report.html's ``Generated``
    line aside). Imports plotly and Optuna, never Ray.
    """
    from raysweep.report.build import write_reports

    return write_reports(run_dir)


def best_text(
    run_dir: RunDir, top: int = 1, export: str | None = None, legacy: bool = False
) -> str:
    """The best trial (or the top K) as JSON; optionally exported to a file (export_json).

    A multi-objective sweep prints its Pareto front instead (the export stays the
    first objective's). ``legacy``: the export is written in the previous tool's
    shape (a trading sweep's ``configurations``, ``entry_model``, ``trading_params``:
    report/legacy_export.py). A trading sweep's plain export (nightly.sh's) holds
    those keys too, its ``configurations`` in the legacy ranking.
    """
    result = run_dir.read_results()
    ranked = result.ranked()
    if not ranked:
        raise SweepError(f"{run_dir}: no trial reported {result.metric!r}")
    if export and legacy:
        write_json_atomic(export, legacy_json(run_dir, result, top))
    elif export and _is_trading(run_dir):
        # the workload's own keys too (entry_model, trading_params, ...): what the
        # previous tool's readers of models/best_configs_latest.json expect
        standard = export_json(run_dir, result, ranked[: max(top, 1)])
        write_json_atomic(export, {**standard, **legacy_json(run_dir, result, top)})
    elif export:
        write_json_atomic(export, export_json(run_dir, result, ranked[: max(top, 1)]))
    if any(t.pareto_optimal for t in result.trials):  # several objectives: the Pareto front
        from raysweep.report.pareto import front_json

        return json.dumps(front_json(result.trials, run_dir.read_spec().objective_pairs), indent=2)
    if top <= 1:
        return json.dumps(best_config_json(result, ranked[0]), indent=2)
    return json.dumps([best_config_json(result, t) for t in ranked[:top]], indent=2)


def export_json(run_dir: RunDir, result: SweepResult, top: list[TrialRecord]) -> dict[str, Any]:
    """``sweep best --export``: best_config.json's fields for the best trial, plus the top K.

    ``configurations``/``values``: the top K configs and their metric, best first
    (what ``sweep run --warm-start`` and nightly.sh read); ``run``: the run's name;
    ``generated_at``: UTC time of the export.
    """
    return {
        **best_config_json(result, top[0]),
        "configurations": [t.config for t in top],
        "values": [result.value(t) for t in top],
        "run": run_dir.name,
        "run_dir": str(run_dir.resolved()),
        "generated_at": utc_now(),
    }


def _is_trading(run_dir: RunDir) -> bool:
    return run_dir.has_spec() and run_dir.read_spec().trainable == "trading"


def legacy_json(run_dir: RunDir, result: SweepResult, top: int) -> dict[str, Any]:
    """``sweep best --export FILE --legacy``: ConfigError unless the run is a trading sweep."""
    from raysweep.report.legacy_export import legacy_export

    trainable = run_dir.read_spec().trainable
    if trainable != "trading":
        raise ConfigError(
            f"--legacy: {run_dir.name} is not a trading sweep (trainable {trainable!r}); the "
            "legacy shape holds an entry model and trading parameters"
        )
    return legacy_export(result, run_dir.name, utc_now(), top=max(top, 1))


def status_text(run_dir: RunDir, as_json: bool = False) -> str:
    """Status, counts, best so far, elapsed/ETA and dashboard of a live or finished run.

    A ``running`` run whose driver pid is gone shows as ``crashed`` (raysweep.status).
    """
    info = run_status(run_dir)
    return json.dumps(info, indent=2) if as_json else format_status(info)


def watch_status(run_dir: RunDir, every_s: float, out: IO[str]) -> None:
    """Print the status every ``every_s`` seconds until the run stops running (or Ctrl-C)."""
    clear = "\033[H\033[2J" if out.isatty() else ""
    while True:
        info = run_status(run_dir)
        print(clear + format_status(info), file=out, flush=True)
        if info["status"] != "running":
            return
        if not clear:
            print("", file=out, flush=True)
        time.sleep(every_s)


def list_text(storage: str | os.PathLike[str]) -> str:
    """One line per run under ``storage``: name, status, trials done/planned, best, start time."""
    rows = [("NAME", "STATUS", "TRIALS", "BEST", "STARTED")]
    for run_dir in list_runs(storage):
        try:
            info = run_status(run_dir)
        except SweepError:
            continue
        counts, total, best = info["counts"], info["trials"], info["best"]
        done = sum(n for kind, n in counts.items() if kind not in ("running", "pending"))
        value = best.get("value") if best else None
        shown = f"{best['metric']}={value:.6g}" if isinstance(value, int | float) else "-"
        started = run_dir.read_state().get("created_at") or "-"
        rows.append(
            (
                run_dir.name,
                info["status"],
                f"{done}/{total}" if total else str(done),
                shown,
                started,
            )
        )
    if len(rows) == 1:
        return f"no runs under {storage}"
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row[:4], widths, strict=True)) + "  " + row[4]
        for row in rows
    )
