"""Warm start (`sweep run --warm-start FILE`): which points are kept, and that every
searcher suggests them first, with the first trial indices, then carries on as usual."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from factories import make_spec
from raysweep.config.load import parse_spec
from raysweep.config.schema import SweepSpec
from raysweep.errors import ConfigError
from raysweep.search.build import build_search_alg, innermost
from raysweep.search.indexed import INDEX_KEY
from raysweep.search.points import WarmStart, load_warm_start, read_configurations, select_points

SPACE: dict[str, Any] = {
    "x": {"type": "uniform", "low": 0, "high": 6},
    "n": {"type": "int", "low": 1, "high": 9},
    "c": {"type": "choice", "values": ["a", "b"]},
    "steps": 2,
}


def points_spec(algorithm: str = "random", num_samples: int = 5, **extra: Any) -> SweepSpec:
    """A spec over :data:`SPACE` (a grid over x for ``grid``), one trial at a time, seed 3."""
    space = dict(SPACE)
    if algorithm == "grid":
        space = {"x": {"type": "grid", "values": [1.0, 2.0]}, "steps": 2}
    search = {"algorithm": algorithm, "num_samples": num_samples, "max_concurrent": 1}
    return make_spec(**{"name": "warm", "space": space, "search": search, "seed": 3, **extra})


def suggest(spec: SweepSpec, points: tuple[dict[str, Any], ...], count: int) -> list[dict]:
    """``count`` suggestions of the spec's searcher chain, each completed at once."""
    alg = build_search_alg(spec, points=points)
    alg.set_search_properties("loss", "min", {})
    configs = []
    for i in range(count):
        config = alg.searcher.suggest(f"t{i}")
        assert isinstance(config, dict)
        configs.append(config)
        alg.searcher.on_trial_complete(f"t{i}", {"loss": float(i)})
    return configs


def sampled(config: dict[str, Any]) -> dict[str, Any]:
    return {k: config[k] for k in ("x", "n", "c") if k in config}


POINTS = ({"x": 1.5, "n": 3, "c": "b"}, {"x": 4.25, "n": 7, "c": "a"})


def test_usable_parameters_are_kept_and_everything_else_is_dropped_with_a_note() -> None:
    configs = [
        {"x": 1.5, "n": 3, "c": "b", "steps": 2},  # a constant equal to the sweep's: silent
        {"x": 9.0, "n": 4, "c": "a", "gone": 1, "steps": 5},
        {"x": "big", "n": 2.5, "c": "z"},
        {"x": 1.5, "n": 3.0, "c": "b"},  # same point as the first one
        {"n": True},
    ]
    points, notes = select_points(points_spec(), configs)
    assert points == ({"x": 1.5, "n": 3, "c": "b"}, {"n": 4, "c": "a"})
    assert isinstance(points[0]["n"], int)
    text = "\n".join(notes)
    assert "configuration 2: 'x' dropped (9.0 is outside [0.0, 6.0])" in text
    assert "configuration 2: 'gone' dropped (not in the space)" in text
    assert "configuration 2: 'steps' dropped (a constant here: 2, got 5)" in text
    assert "configuration 3: 'x' dropped (\"big\" is not a finite number)" in text
    assert "configuration 3: 'n' dropped (2.5 is not an integer)" in text
    assert 'configuration 3: \'c\' dropped ("z" is not one of ["a", "b"])' in text
    assert "configuration 3 dropped: no parameter of the space left" in text
    assert "configuration 4 dropped: same as an earlier one" in text
    assert "configuration 5: 'n' dropped (true is not a finite number)" in text


def test_points_take_at_most_half_the_trials_so_the_sweep_still_searches() -> None:
    """A nightly sweep of 10 trials warm-started from its 10 exported configurations
    re-evaluated them and searched nothing new, silently."""
    configs = [{"x": i / 2} for i in range(10)]
    points, notes = select_points(points_spec(num_samples=10), configs)
    assert [p["x"] for p in points] == [0.0, 0.5, 1.0, 1.5, 2.0]
    assert notes == [
        "5 configuration(s) dropped: earlier configurations take at most half of the sweep's "
        "10 trials (here 5), so that the searcher proposes 5 new ones; raise "
        "search.num_samples to evaluate more of them"
    ]
    points, notes = select_points(points_spec(num_samples=3), configs[:1])
    assert points == ({"x": 0.0},) and notes == []


def test_int_steps_accept_what_the_searcher_itself_suggests() -> None:
    space = {"k": {"type": "int", "low": 3, "high": 30, "step": 5}}
    spec = parse_spec({**_data(points_spec()), "space": space})
    points, notes = select_points(spec, [{"k": 8}, {"k": 10}, {"k": 9}, {"k": 35}])
    assert points == ({"k": 8}, {"k": 10})  # 3 + 5j, and Ray's multiples of 5
    assert notes[0] == "configuration 3: 'k' dropped (9 is not on the step 5 from 3)"
    assert notes[2] == "configuration 4: 'k' dropped (35 is outside [3, 30])"


def _data(spec: SweepSpec) -> dict[str, Any]:
    return {
        "name": spec.name,
        "trainable": spec.trainable,
        "metric": spec.metric,
        "mode": spec.mode,
        "seed": spec.seed,
    }


def test_grid_search_skips_warm_start_and_says_so() -> None:
    points, notes = select_points(points_spec("grid", num_samples=1), [{"x": 1.0}])
    assert points == ()
    assert notes == ["warm start skipped: grid search evaluates every grid point anyway"]


def test_a_random_search_keeps_the_grid_to_the_grid() -> None:
    space = {"x": {"type": "uniform", "low": 0, "high": 6}, "g": {"type": "grid", "values": [1, 2]}}
    spec = parse_spec({**_data(points_spec()), "space": space, "search": {"num_samples": 2}})
    points, notes = select_points(spec, [{"x": 2.0, "g": 2}])
    assert points == ({"x": 2.0},)
    assert notes == ["configuration 1: 'g' dropped (the grid sets it)"]


@pytest.mark.parametrize("algorithm", ["random", "optuna", "hyperopt"])
def test_points_are_the_first_suggestions_with_the_first_indices(algorithm: str) -> None:
    configs = suggest(points_spec(algorithm), POINTS, 4)
    assert [sampled(c) for c in configs[:2]] == list(POINTS)
    assert [c[INDEX_KEY] for c in configs] == [0, 1, 2, 3]
    assert sampled(configs[2]) not in POINTS  # then the searcher proposes its own


@pytest.mark.parametrize("algorithm", ["optuna", "hyperopt"])
def test_a_partial_point_is_completed_from_the_seed(algorithm: str) -> None:
    first = suggest(points_spec(algorithm), ({"x": 2.0},), 1)[0]
    again = suggest(points_spec(algorithm), ({"x": 2.0},), 1)[0]
    assert first["x"] == 2.0 and set(sampled(first)) == {"x", "n", "c"}
    assert first == again  # the missing values come from the sweep's seed


def test_random_search_after_the_points_is_the_sequence_without_them() -> None:
    cold = suggest(points_spec("random"), (), 5)
    warm = suggest(points_spec("random"), POINTS, 5)
    assert warm[2:] == cold[2:]  # points stand in for the first variants only
    assert sampled(warm[0]) == POINTS[0] and warm[0]["steps"] == 2


def test_random_search_restores_its_points_and_position(tmp_path: Path) -> None:
    spec = points_spec("random")
    searcher: Any = innermost(build_search_alg(spec, points=POINTS))
    searcher.suggest("a")
    path = tmp_path / "searcher.json"
    searcher.save(str(path))
    fresh: Any = innermost(build_search_alg(spec))  # a restore builds the chain afresh
    fresh.restore(str(path))
    assert sampled(fresh.suggest("b")) == POINTS[1]


def test_the_file_must_be_an_export(tmp_path: Path) -> None:
    path = tmp_path / "export.json"
    with pytest.raises(ConfigError, match="no such file"):
        read_configurations(path)
    path.write_text("{not json")
    with pytest.raises(ConfigError, match="not readable JSON"):
        read_configurations(path)
    path.write_text(json.dumps({"best": 1}))
    with pytest.raises(ConfigError, match="expected an object with 'configurations'"):
        read_configurations(path)
    path.write_text(json.dumps({"configurations": [1, 2]}))
    with pytest.raises(ConfigError, match="'configurations' must be a list of objects"):
        read_configurations(path)
    path.write_text(json.dumps({"config": {"x": 1.0}}))  # a best_config.json
    assert read_configurations(path) == [{"x": 1.0}]


def test_load_warm_start_round_trips_through_state(tmp_path: Path) -> None:
    path = tmp_path / "export.json"
    path.write_text(json.dumps({"configurations": [{"x": 1.0, "zz": 0}]}))
    warm = load_warm_start(path, points_spec())
    assert warm.points == ({"x": 1.0},) and warm.source == str(path)
    assert WarmStart.from_json(json.loads(json.dumps(warm.to_json()))) == warm


def test_dry_run_shows_the_points_and_writes_nothing(tmp_path: Path) -> None:
    from raysweep import api

    export = tmp_path / "export.json"
    export.write_text(json.dumps({"configurations": [{"x": 1.0}, {"x": 99.0}]}))
    config = tmp_path / "warm.json"
    config.write_text(json.dumps(_data(points_spec()) | {"space": SPACE}))
    out = io.StringIO()
    options = api.RunOptions(
        config=config, storage=tmp_path / "runs", dry_run=True, warm_start=export
    )
    assert api.run_sweep(options, out=out) == 0
    assert f"warm start: 1 configuration(s) from {export} first" in out.getvalue()
    assert "configuration 2: 'x' dropped (99.0 is outside [0.0, 6.0])" in out.getvalue()
    assert not (tmp_path / "runs").exists()
    bad = api.RunOptions(config=config, storage=tmp_path / "runs", warm_start=tmp_path / "no")
    with pytest.raises(ConfigError, match=r"--warm-start .*no such file"):
        api.run_sweep(bad, out=out)
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("algorithm", ["random", "optuna", "hyperopt"])
def test_strict_batches_hand_out_the_points_first_too(algorithm: str) -> None:
    spec = points_spec(algorithm, reproducibility={"strict": True, "batch_size": 2})
    configs = suggest(spec, POINTS, 3)
    assert [sampled(c) for c in configs[:2]] == list(POINTS)
    assert [c[INDEX_KEY] for c in configs] == [0, 1, 2]
