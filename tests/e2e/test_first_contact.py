"""A new user's first sweeps, as `sweep` processes on a real local Ray.

* Hourly FX bars in the shape of backtesting.py's ``EURUSD.csv`` (header
  ``,Open,High,Low,Close,Volume``, an unnamed timestamp column, weekend gaps), made
  here, with the crypto example's ranges: the data loads as it comes, its summary
  (bars, span, gaps, typical move, folds and their dates) is on screen, in
  sweep_output.log and repro.json, ``max_t`` beyond the folds is warned about, the
  start says what the same seed repeats, the progress lines say what results.json
  says, and a best trial with fewer trades than ``min_trades`` is warned about at the
  end, in results.json and both reports.
* A trainable of the user's own that reports ``loss`` for a sweep of ``los``: one line,
  exit 1, no traceback; ``sweep status`` says what failed and what to do.
* Every read-only command stops quietly when its reader has gone.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from factories import (
    REPO,
    SWEEP,
    fx_hourly_bars,
    make_sweep,
    quadratic_sweep,
    run_sweep_cli,
    sweep_env,
)
from raysweep.rundir import RunDir

pytestmark = pytest.mark.slow
# the crypto example's ranges (sweeps/trading.json), far too wide for FX's 0.07 % an hour
CRYPTO_RANGES: dict[str, Any] = {
    "entry_model": "lightgbm",
    "lightgbm.num_leaves": {"type": "int", "low": 4, "high": 16},
    "label_threshold": {"type": "loguniform", "low": 0.002, "high": 0.01},
    "stop_loss": {"type": "uniform", "low": 0.01, "high": 0.05},
    "take_profit": {"type": "uniform", "low": 0.02, "high": 0.1},
}
USER_TRAINABLE = """
from ray import tune


def fit(config):
    for step in range(1, 4):
        tune.report({"loss": (config["x"] - 1) ** 2 / step, "step": step})
"""


@dataclass(frozen=True)
class Done:
    code: int
    out: str
    err: str
    run_dir: RunDir


def sweep_run(work: Path, config: dict[str, Any], pythonpath: tuple[Path, ...] = ()) -> Done:
    path = work / f"{config['name']}.json"
    path.write_text(json.dumps(config))
    done = run_sweep_cli(
        "run", "--config", str(path), "--storage", str(work / "runs"), "--no-dashboard",
        cwd=work, pythonpath=pythonpath,
    )  # fmt: skip
    return Done(done.returncode, done.stdout, done.stderr, RunDir(work / "runs" / config["name"]))


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("first_contact")


@pytest.fixture(scope="module")
def fx_config(work: Path) -> dict[str, Any]:
    fx_hourly_bars(3000).to_csv(work / "EURUSD.csv")
    return make_sweep(
        "trading",
        name="fx",
        trainable_args={
            "data": "EURUSD.csv",
            "n_folds": 3,
            "num_boost_round": 10,
            "min_trades": 1000,
        },
        space=CRYPTO_RANGES,
        search={"algorithm": "random", "num_samples": 4, "max_concurrent": 2},
        scheduler={"type": "asha", "max_t": 4, "grace_period": 1, "reduction_factor": 2},
        seed=3,
    )


@pytest.fixture(scope="module")
def fx(work: Path, fx_config: dict[str, Any]) -> Done:
    return sweep_run(work, fx_config)


SUMMARY_HEAD = (
    "Data: EURUSD.csv: 3000 bars, 1 symbol(s) (EURUSD), 2004-08-19 00:00 UTC .. "
    "2005-02-09 23:00 UTC, interval 1h"
)


def test_fx_bars_as_they_come_run_start_to_end_with_their_summary_on_screen(fx: Done) -> None:
    assert fx.code == 0, fx.out + fx.err
    lines = fx.out.splitlines()
    start = lines.index(SUMMARY_HEAD)
    assert lines[start + 1] == "  25 gap(s), 1200 missing bar(s); largest:"
    assert lines[start + 2] == "    EURUSD: 48 bar(s) after 2004-08-20 20:00 UTC"
    assert any(line.startswith("  typical move: 0.0") for line in lines)
    assert "  3 walk-forward fold(s), expanding window, embargo 12 bar(s):" in lines
    folds = [line for line in lines if line.startswith("    fold ")]
    assert len(folds) == 3 and folds[2].endswith("validate 2005-01-12 04:00 .. 2005-02-09 "
                                                 "23:00 (500 bars)")  # fmt: skip
    assert any(line.startswith("warning: scheduler.max_t 4 is more than the 3 result(s)")
               for line in lines)  # fmt: skip
    scope = [line for line in lines if line.startswith("Same seed, ")]
    assert scope == [
        "Same seed, same trials, not the same sweep: each trial repeats given its config "
        "(sweep repro), but asha's early stops depend on the order results arrive (2 trials "
        'at a time); for the whole sweep to repeat, set "reproducibility": {"strict": true}'
    ]
    assert "Traceback" not in fx.out + fx.err
    log = fx.run_dir.log_path.read_text()
    assert SUMMARY_HEAD in log and folds[0] in log and scope[0] in log
    data = fx.run_dir.read_manifest()["data"]
    assert data["bars"] == 3000 and data["gaps"] == 25 and data["interval"] == "0 days 01:00:00"
    assert [f["validation"] for f in data["folds"]][2] == ["2005-01-12 04:00", "2005-02-09 23:00"]
    assert fx.run_dir.read_manifest()["reproducibility"]["scope"] == scope[0]


def test_the_progress_lines_say_what_results_json_says(fx: Done) -> None:
    said = {}
    for line in fx.out.splitlines():
        if line.startswith("[") and "/4] " in line:
            _, trial_id, status, *_ = line.split()
            said[trial_id] = status
    recorded = {t.trial_id: t.status for t in fx.run_dir.read_results().trials}
    assert said == recorded and set(said.values()) <= {"completed", "stopped"}
    counts = {s: list(recorded.values()).count(s) for s in ("completed", "stopped")}
    summary = f"Trials: 4 total, {counts['completed']} completed, {counts['stopped']} stopped"
    assert summary in fx.out


def test_too_few_trades_in_the_best_trial_is_said_at_the_end_in_results_and_reports(
    fx: Done,
) -> None:
    result = fx.run_dir.read_results()
    best = result.best()
    assert best is not None
    (warning,) = result.warnings
    trades = best.last["n_trades"]
    assert warning.startswith(
        f"the best trial, {best.trial_id}, made {trades:g} trade(s) over its validation "
        "folds, fewer than min_trades 1000: too few for its metrics"
    )
    before_results = fx.out[: fx.out.index("Results: ")]
    assert before_results.rstrip().endswith(f"warning: {warning}")
    assert f"warning: {warning}" in fx.run_dir.report_path.read_text()
    assert warning.split(":")[0] in fx.run_dir.html_report_path.read_text()


def test_validate_says_the_same_before_anything_runs(work: Path, fx_config: dict[str, Any]) -> None:
    path = work / "fx-validate.json"
    path.write_text(json.dumps({**fx_config, "name": "fx-validate"}))
    done = run_sweep_cli("validate", "--config", str(path), cwd=work)
    assert done.returncode == 0, done.stderr
    json.loads(done.stdout)  # the resolved spec alone on stdout
    notes = done.stderr.splitlines()
    assert notes[0] == SUMMARY_HEAD and notes[-1] == "ok: 4 trials"
    assert any(n.startswith("warning: scheduler.max_t 4 is more than the 3") for n in notes)


def test_status_prints_the_best_config_as_json(fx: Done) -> None:
    done = run_sweep_cli("status", str(fx.run_dir.path))
    line = next(x for x in done.stdout.splitlines() if x.startswith("best config: "))
    config = json.loads(line.removeprefix("best config: "))
    assert all(len(repr(v)) <= 12 for v in config.values() if isinstance(v, float)), config


@pytest.fixture(scope="module")
def misnamed(work: Path) -> Done:
    code = work / "code"
    code.mkdir()
    (code / "mytrain.py").write_text(USER_TRAINABLE)
    search = {"algorithm": "random", "num_samples": 4, "max_concurrent": 2}
    config = quadratic_sweep(name="los", trainable="mytrain:fit", metric="los", search=search)
    return sweep_run(work, config, pythonpath=(code,))


def test_a_metric_never_reported_ends_in_one_line_naming_what_was(misnamed: Done) -> None:
    assert misnamed.code == 1, misnamed.out + misnamed.err
    assert "Traceback" not in misnamed.out + misnamed.err
    errors = [line for line in misnamed.err.splitlines() if line.strip()]
    assert len(errors) == 1, misnamed.err
    assert errors[0].startswith("error: metric: 'los' was not in what trial ")
    assert errors[0].endswith(
        "reported; it reported: loss, step; did you mean loss? (fix metric in the config, "
        "or report 'los' with tune.report)"
    )


def test_status_of_the_failed_run_says_what_failed_and_what_to_do(misnamed: Done) -> None:
    done = run_sweep_cli("status", str(misnamed.run_dir.path))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "los: failed"
    assert lines[1].startswith("error: MetricNotReported: metric: 'los' was not in what trial")
    advice = next(line for line in lines if line.startswith("what to do: "))
    config = misnamed.run_dir.path.parent.parent / "los.json"
    assert f"sweep run --config {config} --name los-2" in advice


@pytest.mark.parametrize(
    "args",
    [
        ("schema",),  # tens of kB: the reader goes before the writer is done
        ("status", "{run}", "--json"),
        ("best", "{run}", "--top", "3"),
        ("list", "--storage", "{storage}"),
        ("history", "{storage}"),
        ("report", "{run}"),
        ("validate", "--config", "{config}"),
    ],
    ids=lambda args: args[0],
)
def test_read_only_commands_stop_quietly_when_the_reader_has_gone(
    fx: Done, work: Path, args: tuple[str, ...]
) -> None:
    """`sweep status RUN | head -3` ended in a BrokenPipeError traceback."""
    where = {"run": str(fx.run_dir.path), "storage": str(fx.run_dir.path.parent),
             "config": str(work / "fx.json")}  # fmt: skip
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the command writes a byte
    try:
        done = subprocess.run(
            [*SWEEP, *(a.format(**where) for a in args)], cwd=REPO, env=sweep_env(),
            stdout=write, stderr=subprocess.PIPE, text=True, timeout=120,
        )  # fmt: skip
    finally:
        os.close(write)
    assert done.returncode in (0, 141), done.stderr
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr
