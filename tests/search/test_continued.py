"""Searcher state across resume and extension: counters, what was learned, concurrency."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ray.tune.search import ConcurrencyLimiter

from factories import quadratic_sweep
from raysweep.config.load import parse_spec
from raysweep.config.schema import SweepSpec
from raysweep.search.build import SweepSearch, build_search_alg, innermost
from raysweep.search.indexed import INDEX_KEY, IndexedSearcher
from raysweep.search.variants import VariantSearcher


def spec(algorithm: str, num_samples: int, max_concurrent: int | None = 2) -> SweepSpec:
    return parse_spec(
        quadratic_sweep(
            name="state",
            space={"x": {"type": "uniform", "low": 0, "high": 6}, "steps": 2},
            search={
                "algorithm": algorithm,
                "num_samples": num_samples,
                "max_concurrent": max_concurrent,
                "options": {"n_startup_trials": 2} if algorithm == "optuna" else {},
            },
            seed=5,
        )
    )


def run_trials(alg: SweepSearch, count: int, first: int = 0) -> list[dict[str, Any]]:
    """Suggest and complete ``count`` trials one at a time, like Tune with max_concurrent 1."""
    configs = []
    for i in range(first, first + count):
        config = alg.searcher.suggest(f"t{i}")
        assert isinstance(config, dict)
        configs.append(config)
        alg.searcher.on_trial_complete(f"t{i}", {"loss": (config["x"] - 3) ** 2})
    return configs


def save(alg: SweepSearch, exp_dir: Path) -> None:
    exp_dir.mkdir(parents=True, exist_ok=True)
    alg.set_search_properties("loss", "min", {})
    alg.save_to_dir(str(exp_dir), session_str="2026-01-01_00-00-00")


def test_chain_and_counter_start(tmp_path: Path) -> None:
    alg = build_search_alg(spec("random", 4), start_index=7)
    assert isinstance(alg.searcher, ConcurrencyLimiter)
    indexed = alg.searcher.searcher
    assert isinstance(indexed, IndexedSearcher) and indexed.next_index == 7
    assert isinstance(innermost(alg), VariantSearcher)


def test_restore_keeps_counter_but_takes_the_new_concurrency_limit(tmp_path: Path) -> None:
    first = build_search_alg(spec("random", 6, max_concurrent=2))
    run_trials(first, 3)
    save(first, tmp_path / "tune")
    again = build_search_alg(spec("random", 6, max_concurrent=4))
    again.restore_from_dir(str(tmp_path / "tune"))
    assert isinstance(again.searcher, ConcurrencyLimiter)
    assert again.searcher.max_concurrent == 4  # the run-time setting, not the saved 2
    indexed = again.searcher.searcher
    assert isinstance(indexed, IndexedSearcher) and indexed.next_index == 3


def test_random_extension_continues_the_seeded_sequence(tmp_path: Path) -> None:
    uninterrupted = run_trials(build_search_alg(spec("random", 5)), 5)
    first = build_search_alg(spec("random", 3))
    run_trials(first, 3)
    save(first, tmp_path / "tune")
    extension = build_search_alg(spec("random", 5), start_index=3, continued_from=tmp_path / "tune")
    extra = run_trials(extension, 2, first=3)
    assert extra == uninterrupted[3:]
    assert [c[INDEX_KEY] for c in extra] == [3, 4]


def test_random_extension_without_saved_state_fast_forwards(tmp_path: Path) -> None:
    uninterrupted = run_trials(build_search_alg(spec("random", 5)), 5)
    (tmp_path / "tune").mkdir()
    extension = build_search_alg(spec("random", 5), start_index=3, continued_from=tmp_path / "tune")
    assert run_trials(extension, 2, first=3) == uninterrupted[3:]


def test_optuna_extension_keeps_the_study(tmp_path: Path) -> None:
    first = build_search_alg(spec("optuna", 4, max_concurrent=1))
    seen = run_trials(first, 4)
    save(first, tmp_path / "tune")
    extension = build_search_alg(
        spec("optuna", 6, max_concurrent=1), start_index=4, continued_from=tmp_path / "tune"
    )
    study = innermost(extension)._ot_study  # type: ignore[attr-defined]
    assert [t.params["x"] for t in study.trials] == [c["x"] for c in seen]
    extra = run_trials(extension, 2, first=4)
    assert [c[INDEX_KEY] for c in extra] == [4, 5]
    assert len(study.trials) == 6
    assert json.dumps(extra)  # plain, serialisable configs
