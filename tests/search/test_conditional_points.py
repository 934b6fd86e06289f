"""Warm start over a conditional space: points hold, and are completed with, only the
parameters active in them; HyperOpt's nested space takes none and the run says so."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from raysweep.config.conditions import conditions
from raysweep.config.load import parse_spec
from raysweep.config.schema import SweepSpec
from raysweep.search.indexed import INDEX_KEY
from raysweep.search.points import WarmStart, complete_points, select_points
from raysweep.search.space import to_param_space
from raysweep.tuner.search_alg import build_search_alg

SPACE: dict[str, Any] = {
    "model": {"type": "choice", "values": ["x", "y"]},
    "x.depth": {"type": "int", "low": 2, "high": 6, "when": {"model": "x"}},
    "y.boosting": {"type": "choice", "values": ["gbdt", "dart"], "when": {"model": "y"}},
    "y.drop_rate": {"type": "uniform", "low": 0.1, "high": 0.3, "when": {"y.boosting": "dart"}},
    "lr": {"type": "loguniform", "low": 0.01, "high": 0.3},
    "steps": 3,
}
ACTIVE_SHAPES = {
    ("lr", "model", "x.depth"),
    ("lr", "model", "y.boosting"),
    ("lr", "model", "y.boosting", "y.drop_rate"),
}


def make_spec(algorithm: str) -> SweepSpec:
    return parse_spec({"name": "c", "trainable": "examples.quadratic:fit", "metric": "loss",
                       "mode": "min", "space": SPACE, "seed": 3,
                       "search": {"algorithm": algorithm, "num_samples": 6,
                                  "max_concurrent": 1}})  # fmt: skip


def domains(spec: SweepSpec) -> dict[str, Any]:
    return {k: v for k, v in to_param_space(spec.space).items() if k != "steps"}


def test_complete_points_fills_only_the_active_parameters() -> None:
    spec = make_spec("optuna")
    points = [
        {"model": "x"},
        {"model": "y", "y.boosting": "gbdt", "x.depth": 4},  # x.depth: not under model y
        {"lr": 0.05},  # the parent itself is drawn, then its children follow the draw
        {"model": "y", "y.boosting": "dart"},
    ]
    for seed in range(5):
        done = complete_points(points, domains(spec), seed, conditions(spec.space))
        assert all(tuple(sorted(p)) in ACTIVE_SHAPES for p in done), done
        assert sorted(done[0]) == ["lr", "model", "x.depth"] and done[0]["model"] == "x"
        assert done[1]["y.boosting"] == "gbdt" and "x.depth" not in done[1]
        assert done[2]["lr"] == 0.05
        assert sorted(done[3]) == ["lr", "model", "y.boosting", "y.drop_rate"]


def test_complete_points_without_conditions_draws_every_parameter() -> None:
    spec = make_spec("optuna")
    done = complete_points([{"model": "x"}], domains(spec), 3)
    assert sorted(done[0]) == ["lr", "model", "x.depth", "y.boosting", "y.drop_rate"]
    assert done == complete_points([{"model": "x"}], domains(spec), 3, {})


def test_a_point_keeps_only_what_its_own_choices_activate() -> None:
    configs = [{"model": "x", "x.depth": 3, "y.boosting": "dart", "lr": 0.1}]
    points, notes = select_points(make_spec("optuna"), configs)
    assert points == ({"model": "x", "x.depth": 3, "lr": 0.1},)
    assert notes == ["configuration 1: 'y.boosting' dropped (inactive when model is \"x\")"]


def test_optuna_suggests_the_completed_active_point_first() -> None:
    spec = make_spec("optuna")
    points, _ = select_points(spec, [{"model": "y", "lr": 0.1}])
    alg = build_search_alg(spec, points=points)
    alg.set_search_properties("loss", "min", {})
    first = alg.searcher.suggest("t0")
    assert isinstance(first, dict) and first.pop(INDEX_KEY) == 0
    expected = complete_points(points, domains(spec), spec.seed, conditions(spec.space))[0]
    assert first == expected and first["model"] == "y" and "x.depth" not in first


def test_hyperopt_over_a_conditional_space_says_it_evaluates_no_point(tmp_path: Path) -> None:
    spec = make_spec("hyperopt")
    points, notes = select_points(spec, [{"model": "x", "x.depth": 3, "lr": 0.1}])
    assert points == ()
    assert notes and "HyperOpt's nested choices for a conditional space take no" in notes[0]
    warm = WarmStart("export.json", points, tuple(notes))
    assert warm.announcement()[0] == "Warm start: no configuration of export.json is used"
    from raysweep import api

    export = tmp_path / "export.json"
    export.write_text(json.dumps({"configurations": [{"model": "x", "lr": 0.1}]}))
    config = tmp_path / "c.json"
    config.write_text(json.dumps(spec.model_dump(mode="json") | {"space": SPACE}))
    out = io.StringIO()
    options = api.RunOptions(
        config=config, storage=tmp_path / "runs", dry_run=True, warm_start=export
    )
    assert api.run_sweep(options, out=out) == 0
    assert f"warm start: 0 configuration(s) from {export}" in out.getvalue()
    assert "HyperOpt's nested choices" in out.getvalue()
