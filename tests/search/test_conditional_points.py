"""Warm start over a conditional space: points hold, and are completed with, only the
parameters active in them; HyperOpt's nested space takes none and the run says so."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from factories import make_spec
from raysweep.config.conditions import conditions
from raysweep.config.schema import SweepSpec
from raysweep.search.build import build_search_alg
from raysweep.search.indexed import INDEX_KEY
from raysweep.search.points import WarmStart, complete_points, select_points
from raysweep.search.space import to_param_space

SPACE: dict[str, Any] = {  # two entry models; one with a nested condition
    "entry": {"type": "choice", "values": ["tree", "linear"]},
    "linear.alpha": {"type": "loguniform", "low": 0.001, "high": 1.0, "when": {"entry": "linear"}},
    "tree.kind": {"type": "choice", "values": ["plain", "dropout"], "when": {"entry": ["tree"]}},
    "tree.drop": {"type": "uniform", "low": 0.1, "high": 0.3, "when": {"tree.kind": "dropout"}},
    "lr": {"type": "loguniform", "low": 0.01, "high": 0.3},
    "steps": 2,
}
ACTIVE_SHAPES = {
    ("entry", "linear.alpha", "lr"),
    ("entry", "lr", "tree.kind"),
    ("entry", "lr", "tree.drop", "tree.kind"),
}


def conditional_spec(algorithm: str) -> SweepSpec:
    search = {"algorithm": algorithm, "num_samples": 6, "max_concurrent": 1}
    return make_spec(name="c", space=SPACE, seed=3, search=search)


def domains(spec: SweepSpec) -> dict[str, Any]:
    return {k: v for k, v in to_param_space(spec.space).items() if k != "steps"}


def test_complete_points_fills_only_the_active_parameters() -> None:
    spec = conditional_spec("optuna")
    points = [
        {"entry": "linear"},
        {"entry": "tree", "tree.kind": "plain", "linear.alpha": 0.5},  # alpha: not under tree
        {"lr": 0.05},  # the parent itself is drawn, then its children follow the draw
        {"entry": "tree", "tree.kind": "dropout"},
    ]
    for seed in range(5):
        done = complete_points(points, domains(spec), seed, conditions(spec.space))
        assert all(tuple(sorted(p)) in ACTIVE_SHAPES for p in done), done
        assert sorted(done[0]) == ["entry", "linear.alpha", "lr"] and done[0]["entry"] == "linear"
        assert done[1]["tree.kind"] == "plain" and "linear.alpha" not in done[1]
        assert done[2]["lr"] == 0.05
        assert sorted(done[3]) == ["entry", "lr", "tree.drop", "tree.kind"]


def test_complete_points_without_conditions_draws_every_parameter() -> None:
    spec = conditional_spec("optuna")
    done = complete_points([{"entry": "linear"}], domains(spec), 3)
    assert sorted(done[0]) == ["entry", "linear.alpha", "lr", "tree.drop", "tree.kind"]
    assert done == complete_points([{"entry": "linear"}], domains(spec), 3, {})


def test_a_point_keeps_only_what_its_own_choices_activate() -> None:
    configs = [{"entry": "linear", "linear.alpha": 0.1, "tree.kind": "dropout", "lr": 0.1}]
    points, notes = select_points(conditional_spec("optuna"), configs)
    assert points == ({"entry": "linear", "linear.alpha": 0.1, "lr": 0.1},)
    assert notes == ["configuration 1: 'tree.kind' dropped (inactive when entry is \"linear\")"]


def test_optuna_suggests_the_completed_active_point_first() -> None:
    spec = conditional_spec("optuna")
    points, _ = select_points(spec, [{"entry": "tree", "lr": 0.1}])
    alg = build_search_alg(spec, points=points)
    alg.set_search_properties("loss", "min", {})
    first = alg.searcher.suggest("t0")
    assert isinstance(first, dict) and first.pop(INDEX_KEY) == 0
    expected = complete_points(points, domains(spec), spec.seed, conditions(spec.space))[0]
    assert first == expected and first["entry"] == "tree" and "linear.alpha" not in first


def test_hyperopt_over_a_conditional_space_says_it_evaluates_no_point(tmp_path: Path) -> None:
    spec = conditional_spec("hyperopt")
    points, notes = select_points(spec, [{"entry": "tree", "tree.kind": "plain", "lr": 0.1}])
    assert points == ()
    assert notes and "HyperOpt's nested choices for a conditional space take no" in notes[0]
    warm = WarmStart("export.json", points, tuple(notes))
    assert warm.announcement()[0] == "Warm start: no configuration of export.json is used"
    from raysweep import api

    export = tmp_path / "export.json"
    export.write_text(json.dumps({"configurations": [{"entry": "tree", "lr": 0.1}]}))
    config = tmp_path / "c.json"
    config.write_text(json.dumps(spec.model_dump(mode="json") | {"space": SPACE}))
    out = io.StringIO()
    options = api.RunOptions(
        config=config, storage=tmp_path / "runs", dry_run=True, warm_start=export
    )
    assert api.run_sweep(options, out=out) == 0
    assert f"warm start: 0 configuration(s) from {export}" in out.getvalue()
    assert "HyperOpt's nested choices" in out.getvalue()
