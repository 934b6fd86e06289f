"""The contract for how a sweep ends: errored trials, the time budget, extension, warm start.

Each engine runs the same sweep in this process (``sweep run``'s path; the Ray
engine's runs share the session's Ray) and must record it the same way: the
same statuses, exit code and state, every trial counted once.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import contract_sweep, run_contract_sweep, trials_by_index

from factories import csv_with_missing_values, run_sweep_cli
from raysweep import api
from raysweep.config.load import parse_spec
from raysweep.repro.seeds import trial_seed_for
from raysweep.rundir import RunDir
from raysweep.search.space import to_param_space
from raysweep.search.variants import VariantSearcher


def results(run_dir: RunDir) -> list[dict[str, Any]]:
    """results.json's trials, each trial id and each index once (checked)."""
    trials = list(json.loads(run_dir.results_path.read_text())["trials"])
    assert len({t["trial_id"] for t in trials}) == len(trials), "a trial id appears twice"
    assert sorted(t["index"] for t in trials) == list(range(len(trials))), "an index is off"
    return trials


def catboost_sweep(tmp_path: Path, name: str, engine: str, nan_modes: list[str],
                   **args: Any) -> dict[str, Any]:  # fmt: skip
    """CatBoost over a CSV with missing values, one trial per ``nan_modes`` value
    (Forbidden fails in training); ``args``: more trainable_args."""
    data_file = csv_with_missing_values(tmp_path / "with_nan.csv")
    data = contract_sweep(name, "grid", "fifo", engine)
    data.update(
        trainable="catboost",
        trainable_args={"dataset": str(data_file), "target": "target", "num_boost_round": 4,
                        **args},
        space={"nan_mode": {"type": "grid", "values": nan_modes}, "depth": 3},
    )  # fmt: skip
    return data


def test_an_errored_trial_is_kept_whole_and_the_engines_agree(
    tmp_path: Path, ray_session: None
) -> None:
    runs = {}
    for engine in ("ray", "local"):
        data = catboost_sweep(tmp_path, f"errored-{engine}", engine, ["Min", "Forbidden", "Max"])
        code, run_dir, out = run_contract_sweep(tmp_path, data)
        assert code == 0, out  # documented: 0 when any trial succeeded
        assert run_dir.read_state()["status"] == "completed"
        assert "1 errored" in out and "errored: _catboost.CatBoostError" in out, out
        trials = {t["config"]["nan_mode"]: t for t in results(run_dir)}
        failed = trials["Forbidden"]
        assert (failed["status"], failed["index"], failed["iterations"]) == ("errored", 1, 0)
        assert failed["config"] == {"nan_mode": "Forbidden", "depth": 3}
        assert failed["seed"] == trial_seed_for(1, 1)
        assert failed["last"] == {} and failed["best_metric"] is None
        last = failed["error"].strip().splitlines()[-1]
        assert last.startswith("_catboost.CatBoostError: ") and "nan_mode != Forbidden" in last
        assert 'File "' in failed["error"]  # the traceback too
        error_files = [p for p in run_dir.path.rglob("*.txt") if "nan_mode != Forbidden" in
                       p.read_text(errors="replace") and p.parent != run_dir.path]  # fmt: skip
        assert error_files, "no error file for the errored trial"
        for mode in ("Min", "Max"):
            assert trials[mode]["status"] == "completed" and trials[mode]["error"] is None
            assert trials[mode]["iterations"] == 4
        report = (run_dir.path / "report.txt").read_text()
        assert "Errors:" in report and "nan_mode != Forbidden" in report
        best = json.loads((run_dir.path / "best_config.json").read_text())
        assert best["config"]["nan_mode"] in ("Min", "Max")
        status = run_sweep_cli("status", str(run_dir.path))
        assert status.returncode == 0 and "1 errored" in status.stdout, status.stderr
        assert f"#1): {last}" in status.stdout, status.stdout
        runs[engine] = trials_by_index(run_dir)
    assert runs["ray"] == runs["local"]


def test_every_trial_errored_exits_1_on_either_engine(tmp_path: Path, engine: str) -> None:
    """A column missing from the data fails each trial as it loads its data, retry included."""
    data = catboost_sweep(tmp_path, f"all-errored-{engine}", engine, ["Min", "Max"],
                          features=["a", "no_such_column"])  # fmt: skip
    data["max_failures"] = 1
    code, run_dir, out = run_contract_sweep(tmp_path, data)
    assert code == 1, out
    trials = results(run_dir)
    assert [t["status"] for t in trials] == ["errored", "errored"]
    assert all("no_such_column" in (t["error"] or "") for t in trials)
    assert run_dir.read_state()["status"] == "failed"
    assert not (run_dir.path / "best_config.json").exists()


def test_the_time_budget_stops_either_engine_the_same_way(tmp_path: Path, engine: str) -> None:
    """The budget ends the sweep as completed (exit 0): the trial it cuts short is stopped,
    no later trial starts, and every trial is recorded once."""
    data = contract_sweep(f"budget-{engine}", "random", "fifo", engine, stop={"time_budget_s": 6})
    data["search"]["num_samples"] = 100
    data["trainable_args"].update(num_boost_round=400, report_every=2)  # 200 reports a trial
    code, run_dir, out = run_contract_sweep(tmp_path, data)
    trials = results(run_dir)
    assert len(trials) < 100  # none on a machine too busy to start a trial in 6 s (below)
    assert code == (0 if trials else 1), out
    assert run_dir.read_state()["status"] == ("completed" if trials else "failed")
    for t in trials[:-1]:
        assert t["status"] == "completed" and t["iterations"] == 200, t
    assert all(t["status"] in ("completed", "stopped") for t in trials[-1:]), trials
    assert all(t["ended_at"] is not None for t in trials), trials
    assert f"Trials: {len(trials)} total" in out
    events = run_dir.read_events()
    started = {e["trial_id"] for e in events if e["event"] == "start"}
    ended = [e["trial_id"] for e in events if e["event"] in ("ended", "errored")]
    assert started == {t["trial_id"] for t in trials} and sorted(ended) == sorted(started)


def test_a_budget_that_ends_before_any_report_records_no_trial_as_completed(
    tmp_path: Path, engine: str
) -> None:
    """The budget runs out before a trial's first report (on Ray, before its worker has
    even started it): no trial is recorded as completed without an iteration, and every
    trial recorded has its start and its end in trials.jsonl (before, Ray's trial that
    never ran was recorded as completed, with no start and no end)."""
    data = contract_sweep(f"early-{engine}", "random", "fifo", engine, stop={"time_budget_s": 1})
    data["trainable_args"].update(num_boost_round=3000, report_every=3000)  # one late report
    code, run_dir, out = run_contract_sweep(tmp_path, data)
    trials = results(run_dir)
    assert f"Trials: {len(trials)} total" in out
    if trials:
        assert code == 0, out
    else:  # exit 1, and why: nothing to show is a failed run
        assert code == 1 and "No trial started before the run ended" in out, out
    assert not [t for t in trials if t["status"] == "completed" and not t["iterations"]], trials
    events = run_dir.read_events()
    started = {e["trial_id"] for e in events if e["event"] == "start"}
    ended = {e["trial_id"] for e in events if e["event"] in ("ended", "errored")}
    assert started == ended == {t["trial_id"] for t in trials}, (events, trials)


def test_num_samples_extension_runs_only_the_extra_trials(tmp_path: Path, engine: str) -> None:
    data = contract_sweep(f"extend-{engine}", "random", "fifo", engine)
    code, run_dir, out = run_contract_sweep(tmp_path, data)
    assert code == 0, out
    before = results(run_dir)
    starts_before = sum(e["event"] == "start" for e in run_dir.read_events())
    out_io = io.StringIO()
    code = api.resume_sweep(
        str(run_dir.path), api.RunOptions(num_samples=6, dashboard=False), out_io
    )
    assert code == 0, out_io.getvalue()
    if engine == "local":  # the Ray engine says "Extending with 2 trials in tune-ext-1/"
        assert "4 finished trial(s) kept" in out_io.getvalue()
    after = results(run_dir)
    assert len(after) == 6
    assert after[:4] == before  # the first part is kept as it was
    assert sum(e["event"] == "start" for e in run_dir.read_events()) - starts_before == 2
    if engine == "ray":  # the extra trials are an experiment of their own
        assert len(list((run_dir.path / "tune-ext-1").glob("trial_*"))) == 2
    # The seeded random sequence goes on where it stopped; seeds follow the index.
    spec = parse_spec({**data, "search": {**data["search"], "num_samples": 6}})
    searcher = VariantSearcher(to_param_space(spec.space), num_samples=6, seed=1)
    expected = [searcher.suggest(str(i)) for i in range(6)]
    for trial in after[4:]:
        assert trial["config"] == expected[trial["index"]]
        assert trial["seed"] == trial_seed_for(1, trial["index"])
    assert run_dir.read_spec().search.num_samples == 6
    out_io = io.StringIO()
    code = api.resume_sweep(str(run_dir.path), api.RunOptions(dashboard=False), out_io)
    assert code == 0 and "nothing to resume" in out_io.getvalue(), out_io.getvalue()


@pytest.mark.parametrize("algorithm", ["random", "optuna", "mf-tpe"])
def test_warm_start_points_run_first_the_same_way_on_both_engines(
    tmp_path: Path, ray_session: None, algorithm: str
) -> None:
    points = [{"learning_rate": 0.1, "num_leaves": 5}, {"learning_rate": 0.02, "num_leaves": 30}]
    export = tmp_path / "best_configs.json"
    export.write_text(json.dumps({"configurations": points}))
    runs = {}
    for engine in ("ray", "local"):
        data = contract_sweep(f"warm-{algorithm}-{engine}", algorithm, "fifo", engine)
        code, run_dir, out = run_contract_sweep(tmp_path, data, warm_start=export)
        assert code == 0, out
        assert f"Warm start: 2 configuration(s) from {export} evaluated first" in out, out
        trials = results(run_dir)
        for index, point in enumerate(points):
            assert trials[index]["config"] == {**point, "objective": "binary"}
            assert trials[index]["seed"] == trial_seed_for(1, index)
        warm = run_dir.read_state()["warm_start"]
        assert (warm["source"], warm["points"]) == (str(export), points)
        # A resume keeps the points the run started with, and says so of new ones.
        out_io = io.StringIO()
        again = api.RunOptions(warm_start=export, dashboard=False)
        assert api.resume_sweep(str(run_dir.path), again, out_io) == 0, out_io.getvalue()
        assert f"--warm-start {export} ignored" in out_io.getvalue(), out_io.getvalue()
        runs[engine] = trials_by_index(run_dir)
    assert runs["ray"] == runs["local"]
