"""The trading problem of the search-quality benchmark is the built-in trainable's composite.

raysweep's recipes run the built-in ``trading`` trainable through ``sweep run``; the
peers (another environment, no raysweep) ask a process of raysweep's environment to
evaluate a configuration. Both must score it the same, whatever the trial's seed, and
score it on later bars than every fold the optimizers see.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
from benchmarks.workloads import search_quality_trading as trading
from benchmarks.workloads.search_quality_peers import peer_runs_on
from benchmarks.workloads.search_quality_problems import PROBLEMS
from benchmarks.workloads.search_quality_recipes import DEFAULT_STRICT, RECIPES, runs_on
from benchmarks.workloads.search_quality_sweep_record import observations

from raysweep.config.load import parse_spec
from raysweep.rundir import Part, RunDir

CONFIG = trading.random_configs(1, seed=3)[0]


@pytest.fixture(scope="module")
def curve() -> list[float]:
    return trading.composites(CONFIG)


def test_the_value_at_each_fold_is_the_composite_so_far_negated(curve: list[float]) -> None:
    problem = trading.TradingProblem()
    assert len(curve) == trading.N_FOLDS == problem.max_fidelity
    assert [problem.value(CONFIG, z) for z in range(1, trading.N_FOLDS + 1)] == [-c for c in curve]
    assert len(set(curve)) > 1  # the folds change the score: a real fidelity axis


def test_a_configuration_stopped_early_is_evaluated_as_far_as_asked(curve: list[float]) -> None:
    problem = trading.TradingProblem()
    key = tuple(float(v) for v in CONFIG.values())
    assert problem.value(CONFIG, 1) == -curve[0]
    assert problem._curves[key] == curve[:1]  # one fold fitted, not eight
    assert problem.value(CONFIG, 2) == -curve[1]
    assert problem._curves[key] == curve[:3]  # a longer request: 3x the folds held
    assert problem._curves[key] == curve[:3]
    assert problem.value(CONFIG, 8) == -curve[-1]
    assert problem._curves[key] == curve


def test_the_trial_seed_changes_nothing_so_the_value_is_a_function_of_the_config(
    curve: list[float],
) -> None:
    assert trading.composites(CONFIG, seed=99) == curve


def test_a_process_without_raysweep_gets_the_same_curve_from_the_server(
    curve: list[float],
) -> None:
    server = trading.Server(Path(sys.executable))
    try:
        assert server.curve(CONFIG) == curve  # exact: the same code, the same floats
        assert server.curve(CONFIG, 2) == curve[:2]
        with pytest.raises(RuntimeError, match="label_horizon"):
            server.curve({**CONFIG, "label_horizon": -3})  # the evaluator's own words
        assert server.curve(CONFIG) == curve  # and it keeps serving
    finally:
        assert server.proc.stdin is not None
        server.proc.stdin.close()
        assert server.proc.wait(timeout=30) == 0


def test_the_held_out_bars_come_after_every_fold_the_optimizers_see() -> None:
    from raysweep.trainables.trading.trainable import prepare

    seen = prepare(dict(CONFIG), PROBLEMS["trading"].sweep_fields()["trainable_args"])
    full = prepare(dict(CONFIG), trading.args(held_out=True))
    assert len(seen.timestamps) == trading.SELECTION_BARS < len(full.timestamps) == trading.BARS
    assert seen.timestamps[-1] < full.timestamps[trading.SELECTION_BARS]
    # the optimizers' bars are the first of the same series, cut into the same folds
    assert seen.bars.equals(full.bars.iloc[: trading.SELECTION_BARS])
    assert full.folds[: trading.N_FOLDS] == seen.folds
    held = full.folds[trading.N_FOLDS :]
    assert len(held) == trading.HELD_OUT_FOLDS
    assert held[0].val_start == seen.folds[-1].val_end == trading.SELECTION_BARS
    assert all(f.val_start >= trading.SELECTION_BARS for f in held)


def test_the_held_out_score_is_the_later_folds_alone_the_same_on_both_sides(
    curve: list[float],
) -> None:
    score = trading.held_out(CONFIG)
    assert score == trading.held_out(CONFIG, seed=99)  # the trial's seed changes nothing
    assert score not in curve  # not a selection fold's cumulative composite
    problem = trading.TradingProblem()
    assert problem.regret(CONFIG) == trading.REFERENCE.optimum - score
    server = trading.Server(Path(sys.executable))
    try:
        assert server.ask({"config": CONFIG, "held_out": True}) == [score]
    finally:
        assert server.proc.stdin is not None
        server.proc.stdin.close()
        assert server.proc.wait(timeout=30) == 0


def test_the_reference_optimum_is_a_config_of_the_recorded_random_search() -> None:
    reference = trading.REFERENCE
    if not reference.date:
        pytest.skip("no reference recorded yet")
    assert reference.config in trading.random_configs(reference.fits, reference.seed)
    assert trading.TradingProblem().regret(reference.config) == 0.0


def test_every_trading_recipe_sweeps_the_problems_space_with_the_builtin_trainable() -> None:
    problem = PROBLEMS["trading"]
    ran = [name for name in RECIPES if runs_on(name, "trading")]
    assert "tpe + asha" in ran and "random + hyperband" in ran and "random" in ran
    for name in ran:
        config = RECIPES[name](problem, 1, 10)
        assert config["trainable_args"]["data"] == str(trading.bars_file()), name
        if name == DEFAULT_STRICT:  # strict mode refuses ASHA today
            continue
        spec = parse_spec(config)
        assert spec.trainable == "trading", name
        assert (spec.metric, spec.mode) == ("composite", "max"), name
        assert sorted(spec.space) == sorted(p.name for p in trading.PARAMS), name
    assert peer_runs_on("dehb", problem)  # folds are a fidelity axis for the peers too


def test_a_maximized_metric_is_observed_negated(tmp_path: Path) -> None:
    problem = trading.TradingProblem()
    key = tuple(float(v) for v in CONFIG.values())
    problem._curves[key] = [0.0] * 7 + [1.5]  # no fit
    problem._held_out[key] = 1.25
    run_dir = RunDir(tmp_path / "run")
    run_dir.path.mkdir()
    run_dir.mark("running")
    run_dir.set_parts([Part("tune", 2)])
    trials = [{"trial_id": "a", "index": 0, "status": "stopped", "config": CONFIG},
              {"trial_id": "b", "index": 1, "status": "stopped", "config": CONFIG}]  # fmt: skip
    results = {"metric": "composite", "mode": "max", "rank_by": "last", "trials": trials}
    (run_dir.path / "results.json").write_text(json.dumps(results))
    starts = [{"trial_id": t, "event": "start", "t": 100.0} for t in "ab"]
    (run_dir.path / "trial_info.jsonl").write_text("".join(json.dumps(s) + "\n" for s in starts))
    folder = run_dir.path / "tune" / "trial_a"
    folder.mkdir(parents=True)
    folder.joinpath("result.json").write_text("".join(json.dumps(
        {"trial_id": "a", "training_iteration": i, "time_total_s": i / 2, "composite": c}) + "\n"
        for i, c in ((1, 0.5), (2, 2.0), (3, 1.0))))  # fmt: skip
    other = run_dir.path / "tune" / "trial_b"
    other.mkdir(parents=True)
    row = {"trial_id": "b", "training_iteration": 1, "time_total_s": 5.0, "composite": 0.1}
    other.joinpath("result.json").write_text(json.dumps(row) + "\n")
    got = observations(run_dir.path, problem, popen_t=100.0)
    assert [r[2] for r in got] == [-0.5, -2.0, -1.0, -0.1]
    assert [r[4] for r in got] == [1, 2, 3, 1]
    # the best composite (2.0) is a new best value: its held-out regret; the others' are
    # not computed (a whole walk-forward evaluation each)
    assert got[0][3] == got[1][3] == trading.REFERENCE.optimum - 1.25
    assert math.isinf(got[2][3]) and math.isinf(got[3][3])
    # sweep best under rank_by "last": a, whose last value ranks it and which ran longest
    assert [r[5] for r in got] == [trading.REFERENCE.optimum - 1.25] * 4
