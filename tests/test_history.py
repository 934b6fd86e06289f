"""The nightly service's Python side: history.jsonl, regressions, the run to resume,
rotation, `sweep history`, `sweep nightly ...` and `sweep best --export`.

Run directories are made through RunDir with real results, as a sweep writes them.
"""

from __future__ import annotations

import io
import json
import math
import os
import subprocess
import sys
import time
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from raysweep import cli
from raysweep.errors import ConfigError, GPUError
from raysweep.history import (
    change_pct,
    changed_params,
    history_rows,
    history_text,
    read_history,
    worse_pct,
)
from raysweep.nightly import NightInput, log_tail, pending_run, record_night, require_gpus, rotate
from raysweep.results.records import SweepResult, TrialRecord
from raysweep.rundir import RunDir

DAY = 86400.0


def make_run(
    log_dir: Path,
    name: str,
    status: str = "completed",
    values: tuple[float, ...] = (1.0, 2.0),
    mode: str = "min",
    age_days: float = 0.0,
) -> RunDir:
    """A run directory as a finished (or dead) sweep leaves it; ``status`` 'crashed' too."""
    run_dir = RunDir(log_dir / name)
    run_dir.path.mkdir(parents=True)
    trials = [
        TrialRecord(
            trial_id=f"t{i}",
            index=i,
            status="completed",
            config={"x": float(i) + 0.5, "steps": 2},
            seed=i,
            iterations=2,
            last={"loss": v},
            best_metric=v,
        )
        for i, v in enumerate(values)
    ]
    run_dir.mark("running")
    run_dir.write_results(SweepResult(name=name, metric="loss", mode=mode, trials=trials))
    if status == "crashed":
        run_dir.update_state(pid=dead_pid())
    elif status != "running":
        run_dir.mark(status)  # type: ignore[arg-type]
    if age_days:
        old = time.time() - age_days * DAY
        os.utime(run_dir.path, (old, old))
    return run_dir


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def night(log_dir: Path, run_dir: RunDir | None, code: int = 0, **kw: Any) -> tuple[dict, dict]:
    return record_night(NightInput(log_dir=log_dir, exit_code=code, run_dir=run_dir, **kw))


def test_change_is_relative_and_worse_follows_the_mode() -> None:
    assert change_pct(1.1, 1.0) == pytest.approx(10.0)
    assert worse_pct(1.1, 1.0, "min") == pytest.approx(10.0)
    assert worse_pct(1.1, 1.0, "max") == pytest.approx(-10.0)
    assert worse_pct(-0.9, -1.0, "min") == pytest.approx(10.0)  # negative metrics
    assert change_pct(0.0, 0.0) == 0.0 and math.isinf(worse_pct(0.5, 0.0, "min"))


def test_first_night_succeeds_and_records_its_best(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, "nightly_20261120_020000", values=(0.5, 0.25))
    line, payload = night(tmp_path, run_dir, started=time.time() - 12)
    assert line["status"] == "succeeded" and payload["event"] == "succeeded"
    assert line["best"] == 0.25 and line["best_config"] == {"x": 1.5, "steps": 2}
    assert line["trials"] == 2 and line["completed"] == 2 and line["wall_s"] >= 12
    assert "change_pct" not in line and payload["previous_best"] is None
    assert read_history(tmp_path) == [line]


@pytest.mark.parametrize(
    ("mode", "second", "status"),
    [
        ("min", 1.04, "succeeded"),  # 4 % worse: under the 5 % threshold
        ("min", 1.06, "regression"),
        ("min", 0.5, "succeeded"),  # better
        ("max", 0.94, "regression"),  # lower is worse when maximising
        ("max", 1.5, "succeeded"),
    ],
)
def test_a_regression_is_a_drop_beyond_the_threshold(
    tmp_path: Path, mode: str, second: float, status: str
) -> None:
    first = make_run(tmp_path, "nightly_20261120_020000", values=(1.0,), mode=mode)
    night(tmp_path, first)
    run_dir = make_run(tmp_path, "nightly_20261121_020000", values=(second,), mode=mode)
    line, payload = night(tmp_path, run_dir, regression_pct=5.0)
    assert line["status"] == status and payload["event"] == status
    assert line["previous_run"] == first.name and line["previous_best"] == 1.0
    assert line["change_pct"] == pytest.approx((second - 1.0) * 100, abs=1e-3)
    assert payload["previous_best"]["value"] == 1.0 and payload["best"]["value"] == second
    assert payload["previous_best"]["config"] == {"x": 0.5, "steps": 2}
    if status == "regression":
        assert "worse than 1" in payload["reason"] and "threshold 5%" in payload["reason"]


def test_failed_nights_are_failures_and_never_the_reference(tmp_path: Path) -> None:
    night(tmp_path, make_run(tmp_path, "nightly_20261120_020000", values=(1.0,)))
    log = tmp_path / "night.log"
    log.write_text("\n".join(f"line {i}" for i in range(80)) + "\n")
    line, payload = night(tmp_path, None, code=6, reason="SWEEP_GPUS=7: no GPU", log=log)
    assert line["status"] == "failed" and payload["event"] == "failed"
    assert payload["exit_code"] == 6 and payload["reason"] == "SWEEP_GPUS=7: no GPU"
    assert payload["run_dir"] is None and payload["best"] is None
    assert payload["log_tail"].splitlines() == [f"line {i}" for i in range(30, 80)]
    line, payload = night(tmp_path, None, code=130, reason="interrupted by SIGTERM")
    assert line["status"] == "interrupted" and payload["event"] == "failed"
    run_dir = make_run(tmp_path, "nightly_20261123_020000", values=(2.0,))
    line, _ = night(tmp_path, run_dir)
    assert line["previous_run"] == "nightly_20261120_020000"  # failed nights are skipped
    assert line["status"] == "regression"


def test_the_newest_unfinished_run_is_the_one_to_resume(tmp_path: Path) -> None:
    assert pending_run(tmp_path) is None
    make_run(tmp_path, "nightly_20261120_020000", status="crashed")
    newest = make_run(tmp_path, "nightly_20261121_020000", status="interrupted")
    assert pending_run(tmp_path) == newest
    make_run(tmp_path, "nightly_20261122_020000", status="completed")
    assert pending_run(tmp_path) is None  # only the newest run counts
    crashed = make_run(tmp_path, "nightly_20261123_020000", status="crashed")
    make_run(tmp_path, "other_run", status="crashed")  # not a nightly run
    assert pending_run(tmp_path) == crashed


def test_rotation_keeps_the_newest_success_and_unfinished_runs(tmp_path: Path) -> None:
    gone = [
        make_run(tmp_path, "nightly_20261001_020000", age_days=40).path,
        make_run(tmp_path, "nightly_20261003_020000", status="failed", age_days=38).path,
    ]
    kept = [
        make_run(tmp_path, "nightly_20261002_020000", age_days=39).path,  # newest success
        make_run(tmp_path, "nightly_20261004_020000", status="crashed", age_days=37).path,
        make_run(tmp_path, "nightly_20261005_020000", status="interrupted", age_days=36).path,
        make_run(tmp_path, "nightly_20261120_020000", status="failed", age_days=1).path,
        make_run(tmp_path, "manual", age_days=90).path,  # not a nightly run
    ]
    for name, age in (("nightly_20261001_020000.log", 40), ("nightly_20261119_020000.log", 2)):
        log = tmp_path / name
        log.write_text("log\n")
        os.utime(log, (time.time() - age * DAY,) * 2)
    gone.append(tmp_path / "nightly_20261001_020000.log")
    kept.append(tmp_path / "nightly_20261119_020000.log")
    removed = rotate(tmp_path, keep_days=14)
    assert sorted(removed) == sorted(gone)
    assert all(not p.exists() for p in gone) and all(p.exists() for p in kept)
    with pytest.raises(ConfigError, match="--keep-days: must be >= 0"):
        rotate(tmp_path, keep_days=-1)


def test_history_shows_each_night_with_its_change_and_changed_parameters(tmp_path: Path) -> None:
    night(tmp_path, make_run(tmp_path, "nightly_20261120_020000", values=(1.0, 2.0)))
    night(tmp_path, None, code=5, reason="only 1.0 GB free")
    night(tmp_path, make_run(tmp_path, "nightly_20261122_020000", values=(3.0, 1.5)))
    make_run(tmp_path, "nightly_20261123_020000", status="crashed")
    rows = history_rows(tmp_path)
    assert [r["status"] for r in rows] == ["succeeded", "failed", "regression", "crashed"]
    assert rows[2]["change_pct"] == pytest.approx(50.0)
    assert rows[2]["changed"] == ["x: 0.5→1.5"]
    text = history_text(tmp_path)
    lines = text.splitlines()
    assert "nightly_20261120_020000" in lines[2] and "succeeded" in lines[2]
    assert "only 1.0 GB free" in lines[3]
    assert "+50.0%" in lines[4] and "x: 0.5→1.5" in lines[4]
    assert "crashed" in lines[5]
    assert changed_params({"a": 1}, {"a": 1, "b": 2}) == ["b: (unset)→2"]


def run_cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = cli.main(list(args))
    return code, out.getvalue()


def test_cli_record_history_and_rotate(tmp_path: Path) -> None:
    first = make_run(tmp_path, "nightly_20261120_020000", values=(1.0,))
    assert run_cli("nightly", "pending", str(tmp_path)) == (0, "")
    payload = tmp_path / "payload.json"
    code, out = run_cli("nightly", "record", str(tmp_path), "--exit-code", "0", "--run",
                        str(first.path), "--payload", str(payload))  # fmt: skip
    assert (code, out) == (0, "succeeded\n")
    second = make_run(tmp_path, "nightly_20261121_020000", values=(2.0,))
    code, out = run_cli("nightly", "record", str(tmp_path), "--exit-code", "0", "--run",
                        str(second.path), "--payload", str(payload), "--resumed")  # fmt: skip
    assert code == 0 and out.startswith("regression: best loss 2 is 100.0% worse than 1 ")
    assert json.loads(payload.read_text())["event"] == "regression"
    code, out = run_cli("history", str(tmp_path), "--json")
    rows = json.loads(out)
    assert [r["run"] for r in rows] == [first.name, second.name] and rows[1]["resumed"]
    old = time.time() - 30 * DAY
    for run_dir in (first, second):
        os.utime(run_dir.path, (old, old))
    code, out = run_cli("nightly", "rotate", str(tmp_path), "--keep-days", "14")
    assert out == f"removed {first.path}\n" and second.path.exists()  # the newest success


def test_best_export_has_the_top_configurations_best_first(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, "nightly_20261120_020000", values=(3.0, 1.0, 2.0))
    export = tmp_path / "models" / "best.json"
    code, _ = run_cli("best", str(run_dir.path), "--top", "10", "--export", str(export))
    data = json.loads(export.read_text())
    best = run_dir.read_best()
    assert code == 0 and best is not None
    assert data["configurations"][0] == best["config"] == data["config"]
    assert [c["x"] for c in data["configurations"]] == [1.5, 2.5, 0.5]
    assert data["values"] == [1.0, 2.0, 3.0]
    assert (data["metric"], data["mode"], data["value"]) == ("loss", "min", 1.0)
    assert data["run"] == run_dir.name and data["generated_at"].endswith("Z")
    assert [p.name for p in export.parent.iterdir()] == ["best.json"]  # no temp file left


def test_gpu_requirement_names_what_is_missing() -> None:
    require_gpus("none")
    with pytest.raises(GPUError, match="GPU 99"):
        require_gpus("99")
    with pytest.raises(ConfigError, match="--gpus"):
        require_gpus("zero")


def test_log_tail_of_a_missing_log_is_empty(tmp_path: Path) -> None:
    assert log_tail(None) == "" and log_tail(tmp_path / "none.log") == ""


def imported_modules(*args: str) -> set[str]:
    """Modules a fresh ``sweep ARGS`` process imports (it must succeed)."""
    repo = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "raysweep.cli", *args],
        cwd=repo, env={**os.environ, "PYTHONPATH": str(repo)}, capture_output=True,
        text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }


def test_history_and_the_nightly_steps_import_no_ray(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, "nightly_20261120_020000", values=(1.0,))
    for args in (
        ["history", str(tmp_path)],
        ["nightly", "pending", str(tmp_path)],
        ["nightly", "record", str(tmp_path), "--exit-code", "0", "--run", str(run_dir.path)],
        ["nightly", "rotate", str(tmp_path), "--keep-days", "14"],
        ["gpus", "--require", "none"],
    ):
        modules = imported_modules(*args)
        assert "raysweep.cli_nightly" in modules, args  # the measurement saw the command
        assert not [m for m in modules if m == "ray" or m.startswith("ray.")], args
        assert "pydantic" not in modules, args  # nor the config models: RunDir reads no spec
