"""What a run says before its first trial, on screen, in sweep_output.log and in repro.json."""

from __future__ import annotations

import io
from pathlib import Path

from factories import fx_hourly_bars, trading_sweep
from raysweep.config.load import parse_spec
from raysweep.gpu.allocation import GPUPlan
from raysweep.output_log import RunLog
from raysweep.repro.manifest import write_manifest
from raysweep.run.opening import announce_opening
from raysweep.rundir import RunDir


def test_the_data_summary_goes_to_screen_log_and_repro_json(tmp_path: Path) -> None:
    bars = tmp_path / "EURUSD.csv"
    fx_hourly_bars(1500).to_csv(bars)
    spec = parse_spec(
        {
            **trading_sweep(data=str(bars), synthetic=None, n_folds=2),
            "scheduler": {"type": "asha", "max_t": 3},
        }
    )
    run_dir = RunDir(tmp_path / "run")
    run_dir.path.mkdir()
    write_manifest(run_dir, spec, GPUPlan((), 0, False))
    screen = io.StringIO()
    with RunLog(run_dir.log_path, screen) as log:
        announce_opening(spec, run_dir, log)
    shown = screen.getvalue().splitlines()
    assert shown[0].startswith("Data: EURUSD.csv: 1500 bars, 1 symbol(s) (EURUSD), 2004-08-19")
    assert "  2 walk-forward fold(s), expanding window, embargo 12 bar(s):" in shown
    assert any(line.startswith("warning: scheduler.max_t 3 is more than the 2") for line in shown)
    assert shown[-1].startswith("Same seed, same trials, not the same sweep: ")
    assert run_dir.log_path.read_text().endswith(screen.getvalue())
    data = run_dir.read_manifest()["data"]
    assert data["summary"][0] == shown[0].removeprefix("Data: ")
    assert data["bars"] == 1500 and len(data["folds"]) == 2 and data["warnings"] == []
    # the data changed under the run before a resume: said, and the earlier summary kept
    fx_hourly_bars(1600).to_csv(bars)
    again = io.StringIO()
    with RunLog(run_dir.log_path, again) as log:
        announce_opening(spec, run_dir, log)
    assert "warning: the data changed since this run started: was EURUSD.csv: 1500 bars" in (
        again.getvalue()
    )
    manifest = run_dir.read_manifest()
    assert manifest["data"]["bars"] == 1600 and manifest["data_before"]["bars"] == 1500
