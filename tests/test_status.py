"""sweep status as data: live counts, best so far, errors and ETA from the run directory."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from factories import quadratic_sweep
from raysweep.config.load import parse_spec
from raysweep.results.records import SweepResult, TrialRecord
from raysweep.rundir import RunDir
from raysweep.status import format_status, run_status

SPEC = quadratic_sweep(
    name="s",
    space={"x": {"type": "uniform", "low": 0, "high": 1}},
    search={"algorithm": "random", "num_samples": 6},
    seed=0,
)


def _run(tmp_path: Path) -> RunDir:
    run_dir = RunDir(tmp_path / "s")
    run_dir.path.mkdir()
    run_dir.write_spec(parse_spec(SPEC))
    run_dir.mark("running")
    return run_dir


def _lines(path: Path, records: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def test_live_run_counts_best_errors_and_eta(tmp_path: Path) -> None:
    run_dir = _run(tmp_path)
    run_dir.update_state(dashboard_url="http://127.0.0.1:8265")
    events = [{"event": "start", "trial_id": f"t{i}", "index": i, "t": i} for i in range(4)]
    events += [
        {"event": "ended", "trial_id": "t0", "index": 0, "loss": 0.5, "best": 0.4,
         "config": {"x": 0.1}},
        {"event": "ended", "trial_id": "t1", "index": 1, "loss": 0.2, "best": 0.2,
         "config": {"x": 0.7}},
        {"event": "errored", "trial_id": "t2", "index": 2, "loss": None,
         "error": "Traceback ...\nValueError: bad x"},
    ]  # fmt: skip
    _lines(run_dir.events_path, events)
    _lines(run_dir.trial_info_path, [{"trial_id": "t0", "event": "returned"}])
    started = datetime.strptime(run_dir.read_state()["commands"][-1]["at"], "%Y-%m-%dT%H:%M:%SZ")
    info = run_status(run_dir, now=started.replace(tzinfo=UTC) + timedelta(seconds=30))
    assert info["counts"] == {
        "running": 1,
        "pending": 2,
        "completed": 1,
        "stopped": 1,
        "errored": 1,
    }
    assert info["best"] == {
        "metric": "loss", "mode": "min", "value": 0.2, "trial_id": "t1", "config": {"x": 0.7},
    }  # fmt: skip
    assert info["errors"] == [{"trial_id": "t2", "index": 2, "error": "ValueError: bad x"}]
    assert info["elapsed_s"] == 30 and info["eta_s"] == 30  # 3 done in 30 s, 3 to go
    text = format_status(info)
    assert "s: running" in text and "ETA 0m30s" in text
    assert "errored: trial t2 (#2): ValueError: bad x" in text
    assert "dashboard: http://127.0.0.1:8265" in text


def test_dead_driver_is_crashed_and_finished_run_lists_errors(tmp_path: Path) -> None:
    run_dir = _run(tmp_path)
    run_dir.update_state(pid=2**22 + 4321)
    assert run_status(run_dir)["status"] == "crashed"
    trials = [
        TrialRecord("a", 0, "completed", {"x": 0.1}, 1, 2, {"loss": 0.3}, 0.3),
        TrialRecord("b", 1, "errored", {"x": 0.2}, 2, 1, {}, None, error="X\nCatBoostError: nan"),
    ]
    run_dir.write_results(SweepResult("s", "loss", "min", trials))
    run_dir.mark("completed", exit_code=0)
    info = run_status(run_dir)
    assert info["counts"] == {"completed": 1, "errored": 1} and info["source"] == "results.json"
    assert info["best"]["trial_id"] == "a" and info["eta_s"] is None
    assert "errored: trial b (#1): CatBoostError: nan" in format_status(info)


def test_a_stopped_trial_counts_as_results_json_will_say(tmp_path: Path) -> None:
    """A live run's counts: the progress line's status, else the rule results.json follows
    (a trial that ran its iteration budget completed, returned or not)."""
    run_dir = RunDir(tmp_path / "s")
    run_dir.path.mkdir()
    run_dir.write_spec(parse_spec({**SPEC, "scheduler": {"type": "asha", "max_t": 4}}))
    run_dir.mark("running")
    _lines(run_dir.events_path, [
        {"event": "ended", "trial_id": "full", "iterations": 4, "loss": 0.5},
        {"event": "ended", "trial_id": "cut", "iterations": 1, "loss": 0.9},
        {"event": "ended", "trial_id": "said", "iterations": 1, "loss": 0.7, "status": "completed"},
    ])  # fmt: skip
    assert run_status(run_dir)["counts"] == {
        "running": 0,
        "pending": 3,
        "completed": 2,
        "stopped": 1,
    }


def test_the_best_config_is_json_at_the_metrics_precision(tmp_path: Path) -> None:
    run_dir = _run(tmp_path)
    trials = [TrialRecord("a", 0, "completed", {"x": 0.123456789012, "n": 3, "kind": "gbdt"}, 1,
                          2, {"loss": 0.30000000000000004}, 0.30000000000000004)]  # fmt: skip
    run_dir.write_results(SweepResult("s", "loss", "min", trials))
    run_dir.mark("completed", exit_code=0)
    text = format_status(run_status(run_dir))
    assert "best: loss=0.3 (trial a)" in text
    assert 'best config: {"x": 0.123457, "n": 3, "kind": "gbdt"}' in text
    assert json.loads(text.split("best config: ")[1].splitlines()[0])["x"] == 0.123457


def test_a_failed_run_says_what_failed_and_what_to_do(tmp_path: Path) -> None:
    run_dir = _run(tmp_path)
    state = run_dir.read_state()
    state["commands"][-1]["argv"] = ["sweep", "run", "--config", "mine.json"]
    run_dir.store.write_json("state.json", state)
    run_dir.mark(
        "failed", error="MetricNotReported: metric: 'los' was not in what trial t0 reported"
    )
    text = format_status(run_status(run_dir))
    assert "s: failed\nerror: MetricNotReported: metric: 'los' was not in" in text
    assert "what to do: fix what the error names (the config, or the trainable's code), then " \
           "start a new run: sweep run --config mine.json --name s-2" in text  # fmt: skip
    errored = RunDir(tmp_path / "e")
    errored.path.mkdir()
    errored.write_spec(parse_spec(SPEC))
    errored.mark("running")
    trials = [TrialRecord("b", 0, "errored", {"x": 0.2}, 2, 0, {}, None, error="X\nOSError: gone")]
    errored.write_results(SweepResult("s", "loss", "min", trials))
    errored.mark("failed", exit_code=1)
    text = format_status(run_status(errored))
    assert "errored: trial b (#0): OSError: gone" in text
    assert f"then rerun them: sweep resume {errored.path} --retry-errored" in text
