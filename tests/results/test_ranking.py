"""``rank_by``: one ranking rule for results.json's best, ``sweep best``, the reports,
``sweep status``, the nightly export and the regression check.

The trading trainable's metrics are cumulative over folds: a trial can peak on its
first fold (3.73) and end far lower (0.009). Ranked by the best over iterations it
wins; ranked by its last value, the steady trial does.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from factories import make_sweep
from raysweep.config.load import json_schema, load_spec, parse_spec, spec_hash, spec_to_json
from raysweep.errors import ConfigError
from raysweep.history import history_text
from raysweep.nightly import NightInput, record_night
from raysweep.report.collect import collect_spec_trials
from raysweep.report.legacy_export import legacy_ranking
from raysweep.report.text import format_summary
from raysweep.results.ranking import rank_trials
from raysweep.results.records import SweepResult, TrialRecord
from raysweep.rundir import RunDir
from raysweep.status import run_status
from raysweep.views import best_text

REPO = Path(__file__).resolve().parents[2]
PEAKED = ("peaked", 3.73, 0.009)  # best over its folds, last
STEADY = ("steady", 1.2, 1.1)


def trading_like(rank_by: str, trials: tuple[tuple[str, float, float], ...] = (PEAKED, STEADY)):
    """A finished sweep whose metric ``composite`` (max) is cumulative over 4 folds."""
    records = [
        TrialRecord(
            trial_id=trial_id,
            index=i,
            status="completed",
            config={"x": float(i)},
            seed=i,
            iterations=4,
            last={"composite": last, "training_iteration": 4},
            best_metric=best,
        )
        for i, (trial_id, best, last) in enumerate(trials)
    ]
    return SweepResult("trading", "composite", "max", records, rank_by=rank_by)


def spec_data(**fields: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((REPO / "sweeps" / "trading.json").read_text())
    data.update(fields)
    return data


def test_the_trading_trainable_ranks_by_last_and_others_keep_best() -> None:
    import raysweep.trainables  # noqa: F401  (the space hooks sweep.json goes through)

    trading = load_spec(REPO / "sweeps" / "trading.json")
    assert trading.rank_by is None and trading.ranking == "last"
    assert load_spec(REPO / "sweeps" / "demo.json").ranking == "best"
    assert parse_spec(spec_data(rank_by="best")).ranking == "best"
    with pytest.raises(ConfigError, match=r"rank_by: Input should be 'last' or 'best'"):
        parse_spec(spec_data(rank_by="final"))


def test_spec_json_and_hashes_of_existing_configs_are_unchanged() -> None:
    import raysweep.trainables  # noqa: F401

    # the hashes these configs had before rank_by existed, resolved as an older
    # spec.json was (new sweeps also record Optuna's newer TPE defaults: search_defaults)
    before = {
        "demo.json": "99dfafa853bcd4c6d3f81f28e60dafb252b99a996ea5bf51e1b367b2ab8c03a7",
        "trading.json": "34996e13bf4c7b53d50c9d5001c9613ea37bc73eb3a10a63d1f7025cb8d11540",
    }
    for name, sha in before.items():
        data = json.loads((REPO / "sweeps" / name).read_text())
        spec = parse_spec(data, new_defaults=False)
        assert "rank_by" not in spec_to_json(spec) and spec_hash(spec) == sha
    explicit = parse_spec(spec_data(rank_by="last"))
    assert spec_to_json(explicit)["rank_by"] == "last"  # what the user wrote is recorded


def test_sweep_schema_shows_rank_by() -> None:
    prop = json_schema()["properties"]["rank_by"]
    assert {"enum": ["last", "best"], "type": "string"} in prop["anyOf"]
    assert "trading" in prop["description"]


def test_last_ranks_by_the_final_value_and_best_as_before() -> None:
    by_last, by_best = trading_like("last"), trading_like("best")
    assert [t.trial_id for t in by_last.ranked()] == ["steady", "peaked"]
    assert [t.trial_id for t in by_best.ranked()] == ["peaked", "steady"]
    assert by_last.value(by_last.trials[0]) == 0.009
    summary = format_summary(by_last)
    assert "Best: trial steady (#1) composite=1.1 " in summary
    assert "ranked by its last value" in summary
    assert "Best: trial peaked (#0) composite=3.73 " in format_summary(by_best)


def test_results_json_records_the_rule_and_best_config_its_value(tmp_path: Path) -> None:
    run_dir = RunDir(tmp_path / "r")
    run_dir.path.mkdir()
    run_dir.write_results(trading_like("last"))
    data = json.loads((run_dir.path / "results.json").read_text())
    assert data["rank_by"] == "last"
    assert run_dir.read_results().rank_by == "last"
    assert run_dir.read_best() == {
        "trial_id": "steady",
        "metric": "composite",
        "mode": "max",
        "value": 1.1,
        "config": {"x": 1.0},
        "rank_by": "last",
    }
    assert json.loads(best_text(run_dir))["trial_id"] == "steady"  # sweep best
    top = json.loads(best_text(run_dir, top=2))
    assert [(t["trial_id"], t["value"]) for t in top] == [("steady", 1.1), ("peaked", 0.009)]


def test_best_ranked_results_json_is_as_it_always_was(tmp_path: Path) -> None:
    run_dir = RunDir(tmp_path / "r")
    run_dir.path.mkdir()
    run_dir.write_results(trading_like("best"))
    assert "rank_by" not in json.loads((run_dir.path / "results.json").read_text())
    assert run_dir.read_results().rank_by == "best"
    assert run_dir.read_best() == {
        "trial_id": "peaked",
        "metric": "composite",
        "mode": "max",
        "value": 3.73,
        "config": {"x": 0.0},
    }


def test_collect_takes_the_rule_from_the_spec(tmp_path: Path) -> None:
    import raysweep.trainables  # noqa: F401
    from raysweep.results.trial_view import INDEX_KEY, TrialView

    spec = load_spec(REPO / "sweeps" / "trading.json")
    run_dir = RunDir(tmp_path / "r")
    run_dir.path.mkdir()
    trials = []
    for i, (trial_id, *_) in enumerate((PEAKED, STEADY)):
        folds = [3.73, 1.0, 0.1, 0.009] if trial_id == "peaked" else [0.9, 1.2, 1.15, 1.1]
        last = {"composite": folds[-1], "training_iteration": len(folds)}
        seen = {"composite": {"min": min(folds), "max": max(folds), "last": folds[-1]}}
        trials.append(TrialView(trial_id, {INDEX_KEY: i, "x": float(i)}, "ended", last, seen))
    result = collect_spec_trials(spec, run_dir, trials)
    assert result.rank_by == "last"
    assert [t.best_metric for t in result.trials] == [3.73, 1.2]
    assert result.best() is not None and result.best().trial_id == "steady"


def test_the_legacy_export_and_the_plain_ranking_agree_on_last() -> None:
    result = trading_like("last", (PEAKED, STEADY, ("short", 5.0, 2.0)))
    result.trials[2].iterations = 2  # stopped by its scheduler after 2 of 4 folds
    result.trials[2].status = "stopped"
    by_last = ["steady", "peaked", "short"]
    assert [t.trial_id for t in rank_trials(result.trials, "composite", "max", "last")] == by_last
    assert [t.trial_id for t in legacy_ranking(result)] == by_last
    assert [t.trial_id for t in result.ranked()] == by_last
    assert result.best() is not None and result.best().trial_id == "steady"


def test_last_ranks_trials_cut_short_after_those_that_ran_to_their_end() -> None:
    trials = (PEAKED, STEADY, ("short", 5.0, 2.0), ("shorter", 6.0, 3.0), ("full", 1.0, 0.5))
    result = trading_like("last", trials)
    for trial, iterations in zip(result.trials[2:], (2, 1, 4), strict=True):
        trial.status, trial.iterations = "stopped", iterations
    # "full" was stopped at the last fold (as by max_iterations): not cut short
    order = ["steady", "full", "peaked", "shorter", "short"]
    assert [t.trial_id for t in result.ranked()] == order
    # by the best value, a stopped trial is ranked by its best as always
    by_best = trading_like("best", trials)
    by_best.trials[3].status = "stopped"
    assert by_best.ranked()[0].trial_id == "shorter"
    # min mode: the same rule
    low = [TrialRecord(f"t{i}", i, s, {}, i, n, {"loss": v}, v)
           for i, (s, n, v) in enumerate((("completed", 3, 2.0), ("stopped", 1, 0.1),
                                          ("completed", 3, 1.5)))]  # fmt: skip
    assert [t.trial_id for t in rank_trials(low, "loss", "min", "last")] == ["t2", "t0", "t1"]
    assert [t.trial_id for t in rank_trials(low, "loss", "min", "best")] == ["t1", "t2", "t0"]


def live_best(
    tmp_path: Path, events: list[dict[str, Any]], returned: tuple[str, ...] = ()
) -> tuple[str, float]:
    """``sweep status``'s best of a live trading run whose trials.jsonl holds ``events``
    (``returned``: the trials that ran to their end, as trial_info.jsonl records them)."""
    import raysweep.trainables  # noqa: F401

    run_dir = RunDir(tmp_path / "r")
    run_dir.path.mkdir()
    run_dir.write_spec(load_spec(REPO / "sweeps" / "trading.json"))
    run_dir.mark("running")
    run_dir.events_path.write_text("".join(json.dumps(e) + "\n" for e in events))
    info = [{"event": "returned", "trial_id": trial_id} for trial_id in returned]
    (run_dir.path / "trial_info.jsonl").write_text("".join(json.dumps(i) + "\n" for i in info))
    best = run_status(run_dir)["best"]
    return best["trial_id"], best["value"]


def test_live_status_ranks_by_the_rule(tmp_path: Path) -> None:
    events = [
        {"event": "start", "trial_id": "peaked", "index": 0, "t": 1},
        {"event": "start", "trial_id": "steady", "index": 1, "t": 2},
        {"event": "ended", "trial_id": "peaked", "index": 0, "composite": 0.009, "best": 3.73},
        {"event": "ended", "trial_id": "steady", "index": 1, "composite": 1.1, "best": 1.2},
    ]
    assert live_best(tmp_path, events) == ("steady", 1.1)


def test_live_status_ranks_a_trial_cut_short_after_those_that_ran_every_fold(
    tmp_path: Path,
) -> None:
    events = [
        {"event": "start", "trial_id": "steady", "index": 0, "t": 1},
        {"event": "start", "trial_id": "short", "index": 1, "t": 2},
        {"event": "ended", "trial_id": "steady", "index": 0, "iterations": 4, "composite": 1.1},
        {"event": "ended", "trial_id": "short", "index": 1, "iterations": 1, "composite": 5.0},
    ]
    assert live_best(tmp_path, events, returned=("steady",)) == ("steady", 1.1)


def make_night(log_dir: Path, name: str, result: SweepResult) -> RunDir:
    run_dir = RunDir(log_dir / name)
    run_dir.path.mkdir(parents=True)
    run_dir.mark("running")
    run_dir.write_results(result)
    run_dir.mark("completed")
    return run_dir


def test_nightly_regression_compares_last_values(tmp_path: Path) -> None:
    first = make_night(tmp_path, "nightly_20261120_020000", trading_like("last"))
    record_night(NightInput(log_dir=tmp_path, exit_code=0, run_dir=first))
    # the next night's steady trial ends at 0.5: a regression of its last value,
    # though its best over the folds (1.3) beats the first night's steady best (1.2)
    worse = trading_like("last", (PEAKED, ("steady", 1.3, 0.5)))
    second = make_night(tmp_path, "nightly_20261121_020000", worse)
    line, payload = record_night(NightInput(log_dir=tmp_path, exit_code=0, run_dir=second))
    assert line["rank_by"] == "last" and line["best"] == 0.5 and line["previous_best"] == 1.1
    assert line["status"] == "regression" and payload["best"]["rank_by"] == "last"
    assert "ranked by the last value" in history_text(tmp_path)


def test_nights_ranked_by_different_rules_are_not_compared(tmp_path: Path) -> None:
    first = make_night(tmp_path, "nightly_20261120_020000", trading_like("best"))
    record_night(NightInput(log_dir=tmp_path, exit_code=0, run_dir=first))
    second = make_night(tmp_path, "nightly_20261121_020000", trading_like("last"))
    line, _ = record_night(NightInput(log_dir=tmp_path, exit_code=0, run_dir=second))
    assert line["status"] == "succeeded" and "previous_best" not in line


def test_a_sweep_run_with_rank_by_last_writes_the_last_values(
    ray_session: None, tmp_path: Path, run_in_process: Callable[[Path, dict[str, Any]], Path],
    small_sweep: Callable[..., dict[str, Any]],
) -> None:  # fmt: skip
    data = small_sweep(name="ranked", rank_by="last")
    data["space"]["steps"] = 3
    run_dir = RunDir(run_in_process(tmp_path, data))
    result = run_dir.read_results()
    assert result.rank_by == "last"
    best = run_dir.read_best()
    assert best is not None and best["rank_by"] == "last"
    by_last = min(result.trials, key=lambda t: t.last["loss"])
    assert (best["trial_id"], best["value"]) == (by_last.trial_id, by_last.last["loss"])
    assert f"loss={by_last.last['loss']:.6g}" in run_dir.read_report()


def test_an_asha_sweep_ranked_by_last_puts_a_trial_that_ran_every_fold_first(
    tmp_path: Path, sweep_cli: Callable[..., Any]
) -> None:
    """A real ASHA sweep of a score cumulated over folds: the trials ASHA
    stopped after their first fold have higher last values than any complete trial."""
    data = make_sweep(
        "examples.quadratic:cumulative",
        name="cumulative",
        metric="score",
        mode="max",
        rank_by="last",
        space={"x": {"type": "uniform", "low": 0.2, "high": 1.0}, "steps": 4},
        search={"algorithm": "random", "num_samples": 10, "max_concurrent": 1},
        scheduler={"type": "asha", "max_t": 4, "grace_period": 1, "reduction_factor": 2},
        seed=3,
    )
    path = tmp_path / "cumulative.json"
    path.write_text(json.dumps(data))
    done = sweep_cli("run", "--config", str(path), "--storage", str(tmp_path / "runs"))
    assert done.returncode == 0, done.stdout + done.stderr
    run_dir = RunDir(tmp_path / "runs" / "cumulative")
    result = run_dir.read_results()
    stopped = [t for t in result.trials if t.status == "stopped"]
    complete = [t for t in result.trials if t.status == "completed"]
    assert stopped and complete
    best_complete = max(t.last["score"] for t in complete)
    assert max(t.last["score"] for t in stopped) > best_complete  # the case ranked here
    ranked = result.ranked()
    assert {t.trial_id for t in ranked[: len(complete)]} == {t.trial_id for t in complete}
    best = run_dir.read_best()
    assert best is not None and best["value"] == best_complete
    shown = json.loads(best_text(run_dir, top=len(complete) + 1))
    assert shown[-1]["trial_id"] in {t.trial_id for t in stopped}
    # the run's live lines showed the same best
    last_line = [line for line in done.stdout.splitlines() if line.startswith("[10/10]")][-1]
    assert f"; sweep best score={best_complete:.6g} (trial " in last_line, last_line
