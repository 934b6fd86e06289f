"""Strict mode: batches and windows feed results in index order, saved like Ray's wrappers.

These drive real Optuna / HyperOpt / variant searchers through the wrapper
chain Ray sees, with simulated schedules (no Ray cluster needed).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from ray.tune.search import Searcher
from ray.tune.search.concurrency_limiter import ConcurrencyLimiter
from ray.tune.search.search_generator import SearchGenerator

from raysweep.config.load import parse_spec
from raysweep.errors import ConfigError
from raysweep.search.build import build_search_alg, build_searcher, innermost
from raysweep.search.indexed import INDEX_KEY, IndexedSearcher
from raysweep.search.strict import BatchedSearcher
from raysweep.search.window import WindowSearcher
from strict_searchers import SCHEDULES, Recorder, objective, simulate, spec_for


@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize("algorithm", ["optuna", "hyperopt", "random"])
def test_configs_do_not_depend_on_slots_or_finish_order(algorithm: str, schedule: str) -> None:
    spec = spec_for(algorithm, schedule=schedule)
    runs = []
    for slots, order_seed in [(1, 0), (2, 1), (4, 2), (3, 3), (10, 4)]:
        searcher = build_searcher(spec)
        searcher.set_search_properties("loss", "min", {})
        runs.append(simulate(searcher, spec.total_trials, slots, random.Random(order_seed)))
    assert [c[INDEX_KEY] for c in runs[0]] == list(range(spec.total_trials))
    for other in runs[1:]:
        assert other == runs[0]
    assert len({round(c["x"], 12) for c in runs[0]}) == spec.total_trials


def test_optuna_learns_from_earlier_batches() -> None:
    """Batches after the startup trials are TPE suggestions: they differ with other results."""
    spec = spec_for("optuna", batch_size=2, num_samples=8)
    a = build_searcher(spec)
    b = build_searcher(spec)
    configs_a = simulate(a, 8, 2, random.Random(0))
    # Same searcher, but an objective that prefers large x: later suggestions must move.
    configs_b: list[Any] = []
    for _ in range(4):
        batch = [b.suggest(f"t{len(configs_b) + k}") for k in range(2)]
        assert b.suggest("extra") is None  # batch outstanding: wait
        for k, config in enumerate(batch):
            b.on_trial_complete(f"t{len(configs_b) + k}", {"loss": -config["x"]})
        configs_b.extend(batch)
    assert configs_a[:2] == configs_b[:2]  # startup batch: seed only
    assert configs_a[4:] != configs_b[4:]


def test_batch_protocol_waits_and_feeds_in_index_order() -> None:
    inner = Recorder()
    batched = BatchedSearcher(inner, batch_size=3, total=5)
    configs = [batched.suggest(t) for t in ("a", "b", "c")]
    assert configs == [{"n": 0}, {"n": 1}, {"n": 2}]
    assert [e[1] for e in inner.events] == ["strict-0", "strict-1", "strict-2"]
    assert batched.suggest("d") is None  # wait while the batch is outstanding
    batched.on_trial_result("c", {"loss": 9.0})  # forwarded at once
    batched.on_trial_complete("c", {"loss": 2.0})
    batched.on_trial_complete("a", {"loss": 0.0})
    assert batched.suggest("d") is None
    assert [e[0] for e in inner.events] == ["suggest"] * 3 + ["result"]
    batched.on_trial_complete("b", None, error=True)
    batched.on_trial_complete("unknown", {"loss": 5.0})  # not ours: ignored
    assert batched.suggest("d") == {"n": 3}
    assert inner.events[3:] == [
        ("result", "strict-2", 9.0),
        ("complete", "strict-0", 0.0),
        ("complete", "strict-1", None),
        ("complete", "strict-2", 2.0),
        ("suggest", "strict-3", None),
        ("suggest", "strict-4", None),  # last batch cut to the total
    ]
    assert batched.suggest("e") == {"n": 4}
    assert batched.suggest("f") is None
    for trial_id in ("e", "d"):
        batched.on_trial_complete(trial_id, {"loss": 1.0})
    assert batched.suggest("f") == Searcher.FINISHED
    assert inner.count == 5
    batched.total = 6  # the sweep is extended by one trial
    assert batched.suggest("g") == {"n": 5}
    assert batched.suggest("h") is None
    batched.on_trial_complete("g", {"loss": 1.0})
    assert batched.suggest("h") == Searcher.FINISHED


def test_finished_inner_searcher_ends_the_sweep() -> None:
    spec = spec_for("random", batch_size=4, num_samples=3)
    searcher = build_searcher(spec)
    assert isinstance(searcher.searcher, BatchedSearcher)
    searcher.searcher.total = None  # rely on the variant searcher's own end
    configs = [searcher.suggest(f"t{i}") for i in range(3)]
    assert [c[INDEX_KEY] for c in configs] == [0, 1, 2]
    assert searcher.suggest("t3") is None
    for i in range(3):
        searcher.on_trial_complete(f"t{i}", {"loss": 1.0})
    assert searcher.suggest("t3") == Searcher.FINISHED


def test_invalid_arguments_name_the_value() -> None:
    with pytest.raises(ValueError, match=r"batch_size must be >= 1 \(got 0\)"):
        BatchedSearcher(Recorder(), batch_size=0)
    with pytest.raises(ValueError, match=r"total must be >= 0 \(got -1\)"):
        BatchedSearcher(Recorder(), batch_size=1, total=-1)


def test_build_searcher_wraps_only_in_strict_mode() -> None:
    strict = build_searcher(spec_for("optuna", batch_size=5))
    assert isinstance(strict, IndexedSearcher)
    assert isinstance(strict.searcher, BatchedSearcher)
    assert strict.searcher.batch_size == 5
    assert strict.searcher.total == 10
    window = build_searcher(spec_for("optuna", batch_size=5, schedule="window")).searcher
    assert isinstance(window, WindowSearcher)
    assert (window.window, window.total) == (5, 10)
    relaxed = parse_spec(
        {**spec_for("optuna").model_dump(mode="json"), "reproducibility": {"strict": False}}
    )
    assert not isinstance(build_searcher(relaxed).searcher, BatchedSearcher)


@pytest.mark.parametrize(
    ("algorithm", "schedule"),
    [(a, s) for a in ("optuna", "hyperopt") for s in SCHEDULES]
    + [("optuna:gp", "window"), ("optuna:cmaes", "window")],  # Optuna's model samplers
)
def test_state_saved_and_restored_through_ray_wrappers(
    algorithm: str, schedule: str, tmp_path: Path
) -> None:
    """Ray saves wrapper state via get_state and the base searcher itself; restore continues."""
    spec = spec_for(algorithm, batch_size=3, num_samples=9, schedule=schedule)

    def chain() -> SearchGenerator:
        searcher = ConcurrencyLimiter(build_searcher(spec), max_concurrent=2)
        searcher.set_search_properties("loss", "min", {})
        return SearchGenerator(searcher)

    def step(gen: SearchGenerator, trial_id: str) -> Any:
        return gen.searcher.suggest(trial_id)

    def finish(gen: SearchGenerator, trial_id: str, config: dict[str, Any]) -> None:
        gen.searcher.on_trial_complete(trial_id, {"loss": objective(config)})

    straight, first = chain(), chain()
    expected: list[Any] = []
    got: list[Any] = []
    # Two trials live, one finished, mid-batch: save, restore into a fresh chain, go on.
    for gen, out in ((straight, expected), (first, got)):
        out.append(step(gen, "a"))
        out.append(step(gen, "b"))
        finish(gen, "a", out[0])
    first.save_to_dir(str(tmp_path), "s1")
    restored = chain()
    restored.restore_from_dir(str(tmp_path))
    for gen, out in ((straight, expected), (restored, got)):
        out.append(step(gen, "c"))
        finish(gen, "b", out[1])
        finish(gen, "c", out[2])
        for k in range(6):
            out.append(step(gen, f"n{k}"))
            finish(gen, f"n{k}", out[-1])
    assert got == expected
    assert [c[INDEX_KEY] for c in got] == list(range(9))


@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize("scheduler", ["median", "hyperband"])
def test_strict_refuses_arrival_order_schedulers(scheduler: str, schedule: str) -> None:
    with pytest.raises(ConfigError) as info:
        spec_for("random", scheduler={"type": scheduler}, schedule=schedule)
    message = str(info.value)
    assert f"scheduler.type: '{scheduler}' is not reproducible in strict mode" in message
    assert "use fifo or asha" in message


@pytest.mark.parametrize("scheduler", ["fifo", "asha"])
def test_strict_accepts_fifo_and_asha(scheduler: str) -> None:
    assert spec_for("random", scheduler={"type": scheduler}).reproducibility.strict


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_an_extension_continues_the_searcher_without_repeating_its_trials(
    schedule: str, tmp_path: Path
) -> None:
    """``--num-samples``: a new chain continues the saved inner searcher (search/continued.py).

    The earlier part's last trials are told to the inner searcher before it is saved,
    and the extension's inner ids go on from there: Ray's OptunaSearch answers an id
    it already holds with that trial's config again.
    """
    first_part = build_search_alg(spec_for("optuna", batch_size=2, num_samples=4,
                                           schedule=schedule))  # fmt: skip
    first_part.set_search_properties("loss", "min", {})
    drawn = []
    for k in range(4):
        config = first_part.searcher.suggest(f"a{k}")
        drawn.append(config["x"])
        first_part.searcher.on_trial_complete(f"a{k}", {"loss": objective(config)})
    first_part.save_to_dir(str(tmp_path), "s1")
    extended = spec_for("optuna", batch_size=2, num_samples=8, schedule=schedule)
    extension = build_search_alg(extended, start_index=4, continued_from=tmp_path)
    extension.set_search_properties("loss", "min", {})
    study = innermost(extension)._ot_study
    assert [t.state.name for t in study.trials] == ["COMPLETE"] * 4
    for k in range(4):
        config = extension.searcher.suggest(f"b{k}")
        assert config[INDEX_KEY] == 4 + k
        drawn.append(config["x"])
        extension.searcher.on_trial_complete(f"b{k}", {"loss": objective(config)})
    assert len(set(drawn)) == 8, drawn
    assert [t.state.name for t in study.trials] == ["COMPLETE"] * 8
