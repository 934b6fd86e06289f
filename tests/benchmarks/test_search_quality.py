"""The search-quality benchmark: problems, regret bookkeeping, the quick run end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from benchmarks.workloads.search_quality_peers import run as run_peer
from benchmarks.workloads.search_quality_problems import PROBLEMS, MFHartmann
from benchmarks.workloads.search_quality_recipes import (
    DEFAULT_STRICT,
    DEFAULT_WITH_FIDELITY,
    RECIPES,
    SCORED,
    STUDIES,
    resolved_digest,
    runs_on,
    scored_on,
)

from factories import recorded_run
from raysweep.config.load import parse_spec

REPO = Path(__file__).resolve().parents[2]
# The published optima (Dixon and Szegö, 1978).
OPTIMA = {
    "mfh3": (0.114614, 0.555649, 0.852547),
    "mfh6": (0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573),
}


@pytest.mark.parametrize("name", sorted(OPTIMA))
def test_hartmann_optimum_has_no_regret_and_low_fidelity_is_flatter(name: str) -> None:
    problem = PROBLEMS[name]
    assert isinstance(problem, MFHartmann)
    best = dict(zip(problem.names, OPTIMA[name], strict=True))
    assert abs(problem.regret(best)) < 1e-4
    assert problem.value(best, problem.max_fidelity) == pytest.approx(problem.optimum, abs=1e-4)
    assert problem.value(best, 1) > problem.value(best, problem.max_fidelity) + 0.3
    assert problem.value(best, 3) == problem.value(best, 3)  # the noise is seeded by the point
    corner = dict.fromkeys(problem.names, 0.0)
    assert problem.regret(corner) > 1.0


def test_every_recipe_is_a_valid_sweep() -> None:
    for name, recipe in RECIPES.items():
        for problem in (p for key, p in PROBLEMS.items() if runs_on(name, key)):
            spec = parse_spec(recipe(problem, 1, 10))
            assert spec.stop.max_iterations == problem.max_fidelity, name


def test_the_scored_recipes_are_the_defaults_and_every_other_recipe_a_study() -> None:
    assert set(SCORED) <= set(RECIPES) and not set(STUDIES) & set(SCORED)
    assert set(STUDIES) | set(SCORED) == set(RECIPES)
    assert scored_on("mfh3") == ("mf-tpe + asha", DEFAULT_STRICT)
    assert scored_on("hpolib") == ("tpe",)
    for problem in PROBLEMS:  # each problem runs its kind's default
        assert runs_on(scored_on(problem)[0], problem), problem


def test_a_peer_spends_exactly_its_budget_in_steps() -> None:
    runs = run_peer("mfh3", "optuna-tpe-sha", seed=1, budget=60, workers=2)["observations"]
    used = [r[0] for r in runs]
    assert used == list(range(1, 61))
    assert all(r[3] >= -1e-6 for r in runs)
    assert {r[4] for r in runs} <= set(range(1, 28)) and max(r[4] for r in runs) > 1


def test_optunas_own_incumbent_is_its_best_complete_trial_none_before() -> None:
    """``study.best_trial``: a pruned trial's better intermediate value never counts."""
    runs = run_peer("mfh3", "optuna-tpe-sha", seed=1, budget=200, workers=2)["observations"]
    complete = [r for r in runs if r[4] == 27]
    assert complete and any(r[2] < min(c[2] for c in complete) for r in runs if r[4] < 27)
    first = runs.index(complete[0])
    assert all(r[5] is None for r in runs[:first])  # told after its step: none complete yet
    for i, row in enumerate(runs[first:], first):
        best = min((r for r in runs[: i + 1] if r[4] == 27), key=lambda r: r[2])
        assert row[5] == best[3], i  # the regret of the best complete trial told


@pytest.mark.slow
def test_quick_variant_scores_the_default_against_the_best_peer_per_point(tmp_path: Path) -> None:
    """The protocol, small: 2 seeds of the scored recipes on mfh3 and Optuna's TPE as the
    peer (the peers' own environment is not needed: Optuna is in the project's)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)]),
           "RAYSWEEP_PEERS_PYTHON": sys.executable}  # fmt: skip
    cmd = [sys.executable, "-m", "benchmarks.run", "search_quality", "--quick"]
    cmd += ["--peers=optuna-tpe-sha", "--results-dir", str(tmp_path)]
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=900,
                          check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads((tmp_path / "search_quality.quick.json").read_text(encoding="utf-8"))
    block = data["problems"]["mfh3"]
    assert block["seeds"] == [1, 2] and block["default"] == DEFAULT_WITH_FIDELITY
    assert list(block["cells"]) == ["10%", "25%", "50%", "100%"]
    cell = block["cells"]["100%"]
    assert cell["best_peer"] == "peer: optuna-tpe-sha" and cell["seeds"] == 2
    assert cell["lower"] + cell["equal"] + cell["higher"] == 2 and 0 < cell["p"] <= 1
    # the strict default runs (strict mode settles ASHA's rungs) and is scored against the default
    assert not [n for n in block["notes"] if f"{DEFAULT_STRICT}: not run" in n], block["notes"]
    (strict,) = [t for t in data["targets"] if "strict default" in t["name"]]
    assert strict["met"] in (True, False) and "strict slot use" in strict["name"]
    names = [t["name"] for t in data["targets"]]
    assert any(n.startswith("mfh3: default / best peer (optuna-tpe-sha)") for n in names)
    assert (tmp_path / "search_quality.quick-mfh3.png").stat().st_size > 1000
    kept = tmp_path / "search_quality-runs" / "mfh3-4-w4-own"
    runs = sorted(kept.glob("raysweep__mf_tpe___asha-*"))
    run = json.loads(runs[0].read_text())["observations"]
    assert [r[0] for r in run] == list(range(1, len(run) + 1))  # a step per report
    assert all(0 < r[1] < 900 and r[5] is not None for r in run)  # sweep best's, each report


def test_a_recipe_pays_every_report_and_a_restart_again(tmp_path: Path) -> None:
    """Hyperband on Ray runs a paused trial without a checkpoint again from its start."""
    from benchmarks.workloads.search_quality_sweep_record import observations

    problem = PROBLEMS["mfh3"]
    good, bad = dict.fromkeys(problem.names, 0.5), dict.fromkeys(problem.names, 0.0)
    trials = [{"trial_id": "a", "index": 0, "status": "completed", "config": good},
              {"trial_id": "b", "index": 1, "status": "stopped", "config": bad}]  # fmt: skip
    starts = [("a", 100.0), ("b", 101.0), ("a", 110.0)]  # "a" paused after 2 steps, restarted
    rows = {"a": [(1, 0.5, -1.0), (2, 1.0, -2.0), (1, 0.5, -1.0), (2, 1.0, -2.0), (3, 1.5, -3.0)],
            "b": [(1, 0.2, 0.0)]}  # fmt: skip
    run = recorded_run(tmp_path / "run", {"metric": "value", "trials": trials}, starts, rows)
    got = observations(run, problem, popen_t=100.0)
    assert [r[0] for r in got] == [1, 2, 3, 4, 5, 6]
    assert [r[1] for r in got] == pytest.approx([0.5, 1.0, 1.2, 10.5, 11.0, 11.5])
    assert [r[2] for r in got] == [-1.0, -2.0, 0.0, -1.0, -2.0, -3.0]
    assert [r[4] for r in got] == [1, 2, 1, 1, 2, 3]  # the fidelity of each report
    assert got[2][3] == problem.regret(bad) and got[0][3] == problem.regret(good)
    assert [r[5] for r in got] == [problem.regret(good)] * 6  # sweep best: a, all along


def test_the_asha_rule_comparison_runs_every_rule_on_the_same_budget() -> None:
    from benchmarks.standalone import asha_rule

    runs = {rule: asha_rule.run("mfh3", rule, seed=1, budget=120, workers=4)
            for rule in asha_rule.RULES}  # fmt: skip
    for rule, observations in runs.items():
        assert [r[0] for r in observations] == list(range(1, 121)), rule
    # raysweep's rank rule decides as Optuna's pruner: the same run, step for step (the
    # observations without their wall time)
    steps = {rule: [(r[0], *r[2:]) for r in observations] for rule, observations in runs.items()}
    assert steps["raysweep-rank"] == steps["optuna-sha"] != steps["ray-asha"]

    class Trial:
        def __init__(self, number: int, value: float) -> None:
            self.number, self.last_step, self.intermediate_values = number, 1, {1: value}

    losses = (0.5, 0.4, 0.42, 0.3, 0.6)  # 0.42: above Ray's 67th percentile of the two before
    ray, rank = asha_rule.ray_pruner(max_t=27), asha_rule.ray_pruner(max_t=27, rule="rank")
    assert [ray.prune(None, Trial(n, v)) for n, v in enumerate(losses)] == [
        False, False, False, False, True]  # fmt: skip
    assert [rank.prune(None, Trial(n, v)) for n, v in enumerate(losses)] == [
        False, False, True, False, True]  # fmt: skip
    quorum = asha_rule.ray_pruner(max_t=27, rule="quorum")  # none passes before 3 results
    assert [quorum.prune(None, Trial(n, v)) for n, v in enumerate(losses)] == [
        True, True, True, False, True]  # fmt: skip


def test_the_incumbent_comparison_reads_both_rules_from_one_run() -> None:
    from benchmarks.standalone import asha_rule

    run = asha_rule.run("mfh3", "raysweep-quorum", seed=1, budget=540, workers=4,
                        sampler="random")  # fmt: skip
    assert asha_rule._regret(run, 120) != float("inf")  # best value at any fidelity
    assert asha_rule._regret(run, 5, "complete") == asha_rule._regret(run, 5)  # none complete
    assert run[-1][5] is not None  # a trial completed: Optuna's best_trial is returned
    assert asha_rule._regret(run, 540, "complete") == run[-1][5]


def test_reuse_never_takes_a_run_recorded_under_another_resolved_spec(tmp_path: Path) -> None:
    """A recipe whose spec resolves otherwise today (a default changed: ASHA's rung rule)
    is recorded under another name, so ``--reuse`` runs it again."""
    from benchmarks.suite import search_quality as sq

    recorded = {"observations": [[1.0, 0.1, 0.5, 0.5, 1.0, 0.5]]}
    for seed in (1, 2):
        sq._keep({}, "raysweep: tpe + asha", recorded, [], tmp_path, "mfh3", seed, 20)
    assert sq._cached(True, tmp_path, "mfh3", "raysweep: tpe + asha", 2, 20) == recorded
    assert sq._cached(True, tmp_path, "mfh3", "raysweep: tpe + asha (ray's rule)", 2, 20) is None
    assert sq._cached(False, tmp_path, "mfh3", "raysweep: tpe + asha", 2, 20) is None
    today = sq._cache_path(tmp_path, "mfh3", "raysweep: tpe + asha", 1, 20)
    digest = resolved_digest("tpe + asha", "mfh3", 20)
    assert digest in today.name and today.parent.name == "mfh3-20-w4-own"
    today.rename(today.with_name(today.name.replace(digest, "0" * 8)))  # an older default's
    assert sq._cached(True, tmp_path, "mfh3", "raysweep: tpe + asha", 1, 20) is None
    # a problem scored on held-out data records under its version: no run scored otherwise
    held_out = sq._cache_path(tmp_path, "lgbm", "peer: dehb", 1, 20)
    assert held_out.parent.name == "lgbm-heldout-20-w4-own"


def earlier_result() -> dict[str, object]:
    """A recorded result of two problems, 2 seeds, 20 evaluations' budget."""
    block = {
        "seeds": [1, 2],
        "full_evals": 20,
        "fidelity_steps": 27,
        "default": "tpe + asha",
        "cells": {},
        "notes": [],
        "table": ["| a |"],
        "ratio_table": [],
        "targets": [],
    }
    return {
        "date": "2026-11-26T10:00:00Z",
        "command": "python -m benchmarks.run search_quality",
        "params": {"slots": 4},
        "problems": {"mfh3": {**block, "table": ["| 3 |"]},
                     "mfh6": {**block, "targets": [{"name": "mfh6: strict", "met": False}]}},
        "problems_run": ["mfh3", "mfh6"],
        "targets": [],
    }  # fmt: skip


def test_a_subset_run_keeps_the_other_problems_blocks_with_their_date() -> None:
    from benchmarks.harness.quality_section import problem_lines
    from benchmarks.suite.search_quality import carry_over

    blocks: dict[str, dict[str, object]] = {}
    assert carry_over(earlier_result(), ["mfh6"], None, 2, blocks) == ["mfh6"]
    assert blocks["mfh6"]["taken"] == "2026-11-26T10:00:00Z"
    (line,) = [x for x in problem_lines(blocks, quick=True) if "**mfh6**" in x]  # type: ignore[arg-type]
    assert "figures of 2026-11-26T10:00:00Z, `" + str(earlier_result()["command"]) in line
    # other seeds, another budget, another number of workers: nothing is carried over
    assert carry_over(earlier_result(), ["mfh6"], None, 3, {}) == []
    assert carry_over(earlier_result(), ["mfh6"], 10, 2, {}) == []
    assert carry_over(None, ["mfh6"], None, 2, {}) == []
    two_slots = {**earlier_result(), "params": {"slots": 2}}
    assert carry_over(two_slots, ["mfh6"], None, 2, {}) == []
    # carried twice: the date it was taken with stays
    later = {**earlier_result(), "date": "2026-11-28T00:00:00Z", "problems": blocks}
    again: dict[str, dict[str, object]] = {}
    carry_over(later, ["mfh6"], None, 2, again)
    assert again["mfh6"]["taken"] == "2026-11-26T10:00:00Z"


def test_the_result_benchmarks_md_shows_is_kept_in_git_and_fills_a_fresh_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import benchmarks.suite.search_quality as sq
    from benchmarks.harness.common import write_result

    monkeypatch.setattr(sq, "KEPT", tmp_path / "figures" / "search_quality.json")
    results = tmp_path / "results"
    results.mkdir()
    (tmp_path / "figures").mkdir()
    assert sq.earlier_result(results) is None
    shown = {**earlier_result(), "problems_run": ["mfh6"], "runs": [{"launch": 1}]}
    (results / "search_quality-mfh6.png").write_bytes(b"png6")
    (results / "search_quality-mfh3.png").write_bytes(b"png3")
    sq.keep(shown, results)
    kept = json.loads(sq.KEPT.read_text())
    assert "runs" not in kept and kept["problems"] == shown["problems"]
    # the curves of the problems this result ran, not of those it carried over
    assert (tmp_path / "figures" / "search_quality-mfh6.png").read_bytes() == b"png6"
    assert not (tmp_path / "figures" / "search_quality-mfh3.png").exists()
    assert sq.earlier_result(results) == kept  # a fresh checkout carries from the kept one
    own = {**earlier_result(), "date": "2026-11-28T00:00:00Z"}
    write_result(results, "search_quality", False, own)
    assert sq.earlier_result(results)["date"] == "2026-11-28T00:00:00Z"  # type: ignore[index]


def test_a_partial_run_leaves_benchmarks_md_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import benchmarks.suite.search_quality as sq
    from benchmarks.harness.cli import parser, refresh_markdown, run_and_report

    monkeypatch.setattr(sq, "KEPT", tmp_path / "kept.json")
    markdown = tmp_path / "BENCHMARKS.md"
    markdown.write_text("# raysweep benchmarks\n\nby hand\n")

    def run(partial: bool, **_: object) -> dict[str, object]:
        result = {"title": "T", "params": {}, "variants": {}, "targets": [], "runs": [],
                  "section_lines": ["the body"]}  # fmt: skip
        return {**result, "partial": "problems ['mfh6'] were not run"} if partial else result

    args = parser("t").parse_args(["--results-dir", str(tmp_path), "--markdown", str(markdown)])
    run_and_report("search_quality", lambda **kw: run(True, **kw), args)
    assert markdown.read_text() == "# raysweep benchmarks\n\nby hand\n"
    refresh_markdown(markdown, tmp_path, [{"benchmark": "search_quality", **run(True)}])
    assert markdown.read_text() == "# raysweep benchmarks\n\nby hand\n"
    assert not sq.KEPT.exists()
    run_and_report("search_quality", lambda **kw: run(False, **kw), args)
    assert "the body" in markdown.read_text()  # the section laid out by the benchmark
    assert json.loads(sq.KEPT.read_text())["title"] == "T"  # the result shown, kept


def test_a_run_recorded_before_the_reference_search_is_measured_from_todays() -> None:
    """Held-out regrets are the held-out value minus the reference search's best: a run
    recorded under another reference is shifted by the difference, nothing else moves."""
    from benchmarks.suite.search_quality import rebased

    lgbm = PROBLEMS["lgbm"]
    obs = [[1, 0.1, 0.2, 0.5, 3, None], [2, 0.2, 0.1, float("inf"), 27, 0.25]]
    shift = 0.125 - lgbm.reference  # type: ignore[attr-defined]
    got = rebased({"observations": obs, "reference": 0.125}, lgbm)
    assert got == [
        [1, 0.1, 0.2, 0.5 + shift, 3, None],
        [2, 0.2, 0.1, float("inf"), 27, 0.25 + shift],
    ]
    same = {"observations": obs, "reference": lgbm.reference}  # type: ignore[attr-defined]
    assert rebased(same, lgbm) == obs
    assert rebased({"observations": obs}, PROBLEMS["mfh3"]) == obs  # no reference: as it is


def test_recorded_only_scores_the_recorded_seeds_and_launches_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--recorded-only`` scores what earlier calls recorded: a seed without a record is
    left out and counted in the notes, and the strict target on fewer paired seeds than
    the protocol's is shown, not judged."""
    import benchmarks.suite.search_quality as sq

    monkeypatch.setattr(sq, "KEPT", tmp_path / "nothing-kept.json")
    monkeypatch.setattr(sq, "peers_python", lambda: None)  # no peers' environment needed
    budget = sq.full_evals(PROBLEMS["mfh3"], sq.FULL_TRIALS) * PROBLEMS["mfh3"].max_fidelity

    def record(regret: float) -> dict[str, object]:
        steps = [budget * f for f in (0.1, 0.25, 0.5, 1.0)]
        return {"observations": [[s, 0.0, 0.0, regret, 27, regret] for s in steps]}

    n = sq.full_evals(PROBLEMS["mfh3"], sq.FULL_TRIALS)
    for seed in (1, 2, 3):
        sq._keep({}, f"raysweep: {DEFAULT_WITH_FIDELITY}", record(0.1 * seed), [], tmp_path,
                 "mfh3", seed, n)  # fmt: skip
        sq._keep({}, "peer: optuna-tpe-sha", record(0.2 * seed), [], tmp_path, "mfh3", seed, n)
    sq._keep({}, f"raysweep: {DEFAULT_STRICT}", record(0.1), [], tmp_path, "mfh3", 1, n)
    result = sq.run(problems=["mfh3"], repeats=3, peers=["optuna-tpe-sha"], recorded_only=True,
                    results_dir=tmp_path)  # fmt: skip
    assert result["runs"] == []  # nothing launched
    cell = result["problems"]["mfh3"]["cells"]["100%"]
    assert cell["seeds"] == 3 and cell["best_peer"] == "peer: optuna-tpe-sha"
    assert cell["ratio"] == pytest.approx(0.5) and cell["lower"] == 3
    notes = result["problems"]["mfh3"]["notes"]
    assert f"mfh3 raysweep: {DEFAULT_STRICT}: 2 of 3 seeds not recorded" in " ".join(notes)
    (strict,) = [t for t in result["targets"] if "strict default" in t["name"]]
    assert strict["met"] is None and "1 of the protocol's 3 seeds, not judged" in strict["name"]
    assert strict["value"] == pytest.approx(1.0)
