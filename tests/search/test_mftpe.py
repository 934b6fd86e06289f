"""``"algorithm": "mf-tpe"``: TPE that learns from every report, running trials included.

The real searcher, driven directly or through the chain Ray sees (``build_searcher``)
on a simulated clock with the real ASHA scheduler (strict_searchers.simulate_sweep).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from optuna.trial import TrialState

from factories import quadratic_sweep
from raysweep.config.load import parse_spec, spec_to_json
from raysweep.errors import ConfigError
from raysweep.search.build import build_searcher, innermost
from raysweep.search.indexed import INDEX_KEY
from raysweep.search.mftpe import MultiFidelityTPE
from strict_searchers import curve, simulate_sweep

SPACE: dict[str, Any] = {
    "x": {"type": "uniform", "low": 0, "high": 6},
    "y": {"type": "int", "low": -3, "high": 3},
    "steps": 9,
}
ASHA = {"type": "asha", "max_t": 9, "grace_period": 1, "reduction_factor": 3}


def mf_spec(num_samples: int = 20, strict: bool = False, **fields: Any) -> Any:
    search = {"algorithm": "mf-tpe", "num_samples": num_samples, "max_concurrent": 4,
              "options": {"n_startup_trials": 3}}  # fmt: skip
    repro = {"strict": True, "batch_size": 3} if strict else {}
    fields = {"seed": 5, **fields}
    data = quadratic_sweep(name="mf", space=SPACE, search=search, scheduler=ASHA,
                           reproducibility=repro, **fields)  # fmt: skip
    return parse_spec(data)


def drive(searcher: Any, reports: list[tuple[int, int]], total: int) -> list[dict[str, Any]]:
    """Suggest ``total`` trials; after each suggestion, give the reports listed for it
    (``(trial number, step)`` pairs, in order) and end a trial at its last listed step."""
    configs: list[dict[str, Any]] = []
    for n in range(total):
        configs.append(searcher.suggest(f"t{n}"))
        for number, step in [r for r in reports if r[0] <= n]:
            result = {"loss": curve(configs[number], step), "training_iteration": step}
            searcher.on_trial_result(f"t{number}", result)
        reports = [r for r in reports if r[0] > n]
    return configs


def test_a_new_sweep_records_mf_tpes_options() -> None:
    options = spec_to_json(mf_spec())["search"]["options"]
    assert options == {"n_startup_trials": 3, "multivariate": True, "group": False}


def test_unknown_options_and_several_objectives_are_refused_by_name() -> None:
    with pytest.raises(
        ConfigError, match=r"options\.sampler: unknown option for algorithm 'mf-tpe'"
    ):
        parse_spec(quadratic_sweep(search={"algorithm": "mf-tpe", "options": {"sampler": "gp"}}))
    with pytest.raises(ConfigError, match=r"several objectives need search\.algorithm"):
        parse_spec(quadratic_sweep(
            search={"algorithm": "mf-tpe"},
            objectives=[{"metric": "loss", "mode": "min"}, {"metric": "step", "mode": "max"}],
        ))  # fmt: skip


def test_the_same_seed_gives_the_same_suggestions() -> None:
    reports = [(n, s) for n in range(12) for s in (1, 2, 3)]
    first = drive(build_searcher(mf_spec()), reports, 12)
    second = drive(build_searcher(mf_spec()), reports, 12)
    assert first == second
    assert [c[INDEX_KEY] for c in first] == list(range(12))
    other = drive(build_searcher(mf_spec(seed=6)), reports, 12)
    assert [c["x"] for c in other] != [c["x"] for c in first]


def test_a_running_trial_is_ranked_by_its_last_report() -> None:
    searcher = innermost(build_searcher(mf_spec()))
    assert isinstance(searcher, MultiFidelityTPE)
    config = searcher.suggest("a")
    assert searcher._frozen("a") is None  # nothing reported yet: left out
    searcher.on_trial_result("a", {"loss": 2.0, "training_iteration": 1})
    searcher.on_trial_result("a", {"loss": 1.5, "training_iteration": 3})
    running = searcher._frozen("a")
    assert running is not None and running.state == TrialState.PRUNED
    assert running.intermediate_values == {1: 2.0, 3: 1.5}
    assert running.params == {k: config[k] for k in ("x", "y")}
    searcher.on_trial_complete("a", {"loss": 1.5, "training_iteration": 3})
    assert searcher._frozen("a").state == TrialState.PRUNED  # type: ignore[union-attr]
    searcher.suggest("b")  # stopped early above; b runs its 9 iterations
    searcher.on_trial_complete("b", {"loss": 0.5, "training_iteration": 9})
    done = searcher._frozen("b")
    assert done is not None and (done.state, done.value) == (TrialState.COMPLETE, 0.5)
    searcher.suggest("c")
    searcher.on_trial_complete("c", None, error=True)
    assert searcher._frozen("c") is None  # an error teaches nothing


def test_rung_results_steer_suggestions_before_any_trial_ends() -> None:
    """Reports at the first steps alone (no trial ended) change what TPE suggests."""
    told = drive(build_searcher(mf_spec()), [(n, 1) for n in range(10)], 10)
    blind = drive(build_searcher(mf_spec()), [], 10)
    assert told[:3] == blind[:3]  # the 3 random start-up trials
    assert all(t != b for t, b in zip(told[3:], blind[3:], strict=True))  # blind: still random


def test_suggestions_after_a_save_and_restore_equal_the_uninterrupted_ones(
    tmp_path: Path,
) -> None:
    reports = [(n, s) for n in range(10) for s in (1, 2)]
    whole = drive(build_searcher(mf_spec()), reports, 10)
    first = build_searcher(mf_spec())
    head = drive(first, [r for r in reports if r[0] < 5], 5)
    innermost(first).save(str(tmp_path / "mftpe.pkl"))
    restored = build_searcher(mf_spec())
    inner = innermost(restored)
    inner.restore(str(tmp_path / "mftpe.pkl"))
    restored.next_index = 5  # type: ignore[attr-defined]  # Ray restores the index chain too
    for number, step in [r for r in reports if r[0] == 4]:  # trial 4's reports came later
        inner.on_trial_result(f"t{number}", {"loss": curve(head[4], step),
                                             "training_iteration": step})  # fmt: skip
    tail = []
    rest = [r for r in reports if r[0] >= 5]
    for n in range(5, 10):
        tail.append(restored.suggest(f"t{n}"))
        for number, step in [r for r in rest if r[0] <= n]:
            result = {"loss": curve(tail[number - 5], step), "training_iteration": step}
            restored.on_trial_result(f"t{number}", result)
        rest = [r for r in rest if r[0] > n]
    assert head + tail == whole


def test_warm_start_points_come_first_and_whole() -> None:
    spec = mf_spec()
    searcher = build_searcher(spec, points=[{"x": 1.0, "y": 2}, {"x": 5.0}])
    first, second, third = (searcher.suggest(f"t{n}") for n in range(3))
    assert (first["x"], first["y"], first[INDEX_KEY]) == (1.0, 2, 0)
    assert second["x"] == 5.0 and -3 <= second["y"] <= 3  # the missing y drawn from the seed
    assert third[INDEX_KEY] == 2


def test_a_conditional_space_suggests_only_the_active_parameters() -> None:
    space = {"model": {"type": "choice", "values": ["a", "b"]},
             "x": {"type": "uniform", "low": 0, "high": 6, "when": {"model": "a"}},
             "y": {"type": "int", "low": -3, "high": 3, "when": {"model": "b"}}}  # fmt: skip
    data = quadratic_sweep(space=space, search={"algorithm": "mf-tpe", "num_samples": 16,
                                                "options": {"n_startup_trials": 2}})  # fmt: skip
    spec = parse_spec(data)
    assert spec_to_json(spec)["search"]["options"]["group"] is True
    searcher = build_searcher(spec)
    for n in range(16):
        config = searcher.suggest(f"t{n}")
        active = {"a": {"model", "x"}, "b": {"model", "y"}}[config["model"]]
        assert set(config) - {INDEX_KEY} == active, config
        value = config.get("x", 3.0) if config["model"] == "a" else 3.0 + abs(config["y"])
        searcher.on_trial_result(f"t{n}", {"loss": value, "training_iteration": 1})
        searcher.on_trial_complete(f"t{n}", {"loss": value, "training_iteration": 1})


def test_an_extension_replays_earlier_trials_into_the_model() -> None:
    searcher = innermost(build_searcher(mf_spec()))
    searcher.add_evaluated_point({"x": 3.0, "y": -1}, 0.1)
    searcher.add_evaluated_point({"x": 0.5, "y": 3}, 9.0, pruned=True, intermediate_values=[12.0])
    good, stopped = searcher._frozen("evaluated-0"), searcher._frozen("evaluated-1")
    assert good is not None and (good.state, good.value) == (TrialState.COMPLETE, 0.1)
    assert stopped is not None and stopped.state == TrialState.PRUNED


@pytest.mark.parametrize("slots", [2, 4])
def test_strict_mode_with_asha_gives_the_one_slot_sweep_at_any_parallelism(slots: int) -> None:
    """Strict mf-tpe + ASHA under random step times: every trial's config, iterations,
    status and value equal the one-slot run's, at 2 and 4 slots, several jitters."""
    spec = mf_spec(num_samples=24, strict=True)
    alone = simulate_sweep(spec, 1, random.Random(0))
    assert sorted(alone) == list(range(24))
    statuses = [t[2] for t in alone.values()]
    assert "stopped" in statuses and "completed" in statuses  # ASHA decided both ways
    for jitter in range(3):
        assert simulate_sweep(spec, slots, random.Random(jitter)) == alone


def test_without_strict_mode_asha_depends_on_arrival_order() -> None:
    """The check above can fail: non-strict runs differ with the order results arrive."""
    spec = mf_spec(num_samples=24)
    runs = [simulate_sweep(spec, 4, random.Random(jitter)) for jitter in range(4)]
    assert any(run != runs[0] for run in runs[1:])
