"""The trading problem of the search-quality benchmark is the built-in trainable's composite.

raysweep's recipes run the built-in ``trading`` trainable through ``sweep run``; the
peers (another environment, no raysweep) ask a process of raysweep's environment to
evaluate a configuration. Both must score it the same, whatever the trial's seed.
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
from benchmarks.workloads.search_quality_recipes import RECIPES, observations, runs_on

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
    assert problem.regret(CONFIG) == trading.REFERENCE_OPTIMUM - curve[-1]
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


def test_the_reference_optimum_is_a_config_of_the_recorded_random_search() -> None:
    assert trading.REFERENCE_CONFIG in trading.random_configs(
        trading.REFERENCE_FITS, trading.REFERENCE_SEED
    )
    assert trading.TradingProblem().regret(trading.REFERENCE_CONFIG) == 0.0


def test_every_trading_recipe_sweeps_the_problems_space_with_the_builtin_trainable() -> None:
    problem = PROBLEMS["trading"]
    ran = [name for name in RECIPES if runs_on(name, "trading")]
    assert "tpe + asha" in ran and "random + hyperband" in ran and "random" in ran
    for name in ran:
        spec = parse_spec(RECIPES[name](problem, 1, 10))
        assert spec.trainable == "trading", name
        assert (spec.metric, spec.mode) == ("composite", "max"), name
        assert sorted(spec.space) == sorted(p.name for p in trading.PARAMS), name
    assert peer_runs_on("dehb", problem)  # folds are a fidelity axis for the peers too


def test_a_maximized_metric_is_observed_negated(tmp_path: Path) -> None:
    problem = trading.TradingProblem()
    problem._curves[tuple(float(v) for v in CONFIG.values())] = [0.0] * 7 + [1.5]  # no fit
    run = RunDir(tmp_path / "run")
    run.path.mkdir()
    run.mark("running")
    run.set_parts([Part("tune", 2)])
    trials = [{"trial_id": "a", "config": CONFIG}]  # b's config: never needed (see below)
    (run.path / "results.json").write_text(
        json.dumps({"metric": "composite", "mode": "max", "trials": trials})
    )
    starts = [{"trial_id": t, "event": "start", "t": 100.0} for t in "ab"]
    (run.path / "trial_info.jsonl").write_text("".join(json.dumps(s) + "\n" for s in starts))
    folder = run.path / "tune" / "trial_a"
    folder.mkdir(parents=True)
    folder.joinpath("result.json").write_text("".join(json.dumps(
        {"trial_id": "a", "training_iteration": i, "time_total_s": i / 2, "composite": c}) + "\n"
        for i, c in ((1, 0.5), (2, 2.0), (3, 1.0))))  # fmt: skip
    other = run.path / "tune" / "trial_b"
    other.mkdir(parents=True)
    row = {"trial_id": "b", "training_iteration": 1, "time_total_s": 5.0, "composite": 0.1}
    other.joinpath("result.json").write_text(json.dumps(row) + "\n")
    got = observations(run.path, problem, popen_t=100.0)
    assert [r[2] for r in got] == [-0.5, -2.0, -1.0, -0.1]
    assert [r[4] for r in got] == [1, 2, 3, 1]
    # the best composite (2.0) is the incumbent at any fidelity, scored by its full regret;
    # the third fold is the highest fidelity reached, the incumbent of what is returned
    assert got[1][3] == trading.REFERENCE_OPTIMUM - 1.5 == got[2][3]
    assert math.isinf(got[3][3])  # no rule's incumbent: its regret is not fitted
