"""The search-quality benchmark: problems, regret bookkeeping, the quick run end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from benchmarks.harness.regret import quartiles, regret_at, regret_at_time, table
from benchmarks.workloads.search_quality_peers import run as run_peer
from benchmarks.workloads.search_quality_problems import PROBLEMS, MFHartmann
from benchmarks.workloads.search_quality_recipes import RECIPES, resolved_digest, runs_on

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


def test_the_incumbent_is_the_best_observed_value_scored_by_its_true_regret() -> None:
    run = [[27, 1.0, -1.0, 2.0], [30, 2.0, -0.5, 0.1], [57, 3.0, -2.0, 1.5]]
    assert regret_at(run, 10) is None
    assert regret_at(run, 29) == 2.0
    assert regret_at(run, 40) == 2.0  # a worse observation does not replace the incumbent
    assert regret_at(run, 57) == 1.5
    assert regret_at_time(run, 2.5) == 2.0
    q = quartiles([1.0, 2.0, 3.0, 4.0, 100.0])
    assert (q["median"], q["q1"], q["q3"]) == (3.0, 2.0, 4.0)


def test_the_returned_incumbent_is_the_best_at_the_highest_fidelity_reached() -> None:
    """A short run that looks better than every complete one is not what an optimizer
    returns: under ``returned`` the best at the highest fidelity reached is."""
    run = [[1, 1.0, -5.0, 3.0, 1], [2, 2.0, -1.0, 2.0, 3], [3, 3.0, -0.5, 1.0, 3],
           [4, 4.0, -2.0, 0.5, 3], [5, 5.0, -9.0, 0.1, 2]]  # fmt: skip
    assert [regret_at(run, b) for b in (1, 2, 3, 4, 5)] == [3.0] * 4 + [0.1]
    assert [regret_at(run, b, "returned") for b in (1, 2, 3, 4, 5)] == [3.0, 2.0, 2.0, 0.5, 0.5]
    assert regret_at_time(run, 3.5, "returned") == 2.0
    with pytest.raises(ValueError, match="fidelity"):
        regret_at([[1, 1.0, -5.0, 3.0]], 1, "returned")
    with pytest.raises(ValueError, match="unknown incumbent rule 'best'"):
        regret_at(run, 1, "best")


def test_the_table_has_the_returned_columns_only_where_every_run_has_its_fidelities() -> None:
    recorded = [[1, 1.0, -5.0, 3.0, 1], [2, 2.0, -1.0, 2.0, 3]]
    old = [[1, 1.0, -5.0, 3.0], [2, 2.0, -1.0, 2.0]]
    rows = table({"a": [recorded, recorded], "b": [recorded, old]}, budget=2)
    assert rows["a"]["returned_100pct"]["median"] == 2.0
    assert rows["a"]["regret_100pct"]["median"] == 3.0
    assert "returned_100pct" not in rows["b"] and rows["b"]["regret_100pct"]["median"] == 3.0


def test_reuse_runs_again_a_run_recorded_without_fidelities_where_the_problem_has_them(
    tmp_path: Path,
) -> None:
    from benchmarks import search_quality as sq

    old = [[1.0, 0.1, 0.5, 0.5]]
    sq._keep({}, "peer: optuna-tpe", old, [], tmp_path, "mfh3", 1, 20)
    assert sq._cached(True, tmp_path, "mfh3", "peer: optuna-tpe", 1, 20) is None
    sq._keep({}, "peer: optuna-tpe", old, [], tmp_path, "hpolib", 1, 20)  # one fidelity only
    assert sq._cached(True, tmp_path, "hpolib", "peer: optuna-tpe", 1, 20) == old


def test_every_recipe_is_a_valid_sweep() -> None:
    for name, recipe in RECIPES.items():
        for problem in (p for key, p in PROBLEMS.items() if runs_on(name, key)):
            spec = parse_spec(recipe(problem, 1, 10))
            assert spec.stop.max_iterations == problem.max_fidelity, name


def test_a_peer_spends_exactly_its_budget_in_steps() -> None:
    runs = run_peer("mfh3", "optuna-tpe-sha", seed=1, budget=60, workers=2)["observations"]
    used = [r[0] for r in runs]
    assert used == list(range(1, 61))
    assert all(r[3] >= -1e-6 for r in runs)
    assert {r[4] for r in runs} <= set(range(1, 28)) and max(r[4] for r in runs) > 1


@pytest.mark.slow
def test_quick_variant_writes_tables_curves_and_targets(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}
    cmd = [sys.executable, "-m", "benchmarks.search_quality", "--quick", "--peers="]
    cmd += ["--results-dir", str(tmp_path)]
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600,
                          check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads((tmp_path / "search_quality.quick.json").read_text(encoding="utf-8"))
    assert data["quick"] is True
    row = data["variants"]["mfh3 · raysweep: tpe"]
    assert row["runs"] == 1
    assert row["regret_100pct"]["median"] is not None
    # a sweep run's reports carry their fidelity: the trial returned is scored too
    assert row["returned_100pct"]["median"] is not None
    assert any(n.startswith("regret Npct: ") for n in data["notes"])
    assert data["tables"]["mfh3"][0].startswith("| optimizer |")
    assert (tmp_path / "search_quality.quick-mfh3.png").stat().st_size > 1000
    # every report is an observation costing one step, as for the peers: 4 trials x 27 steps
    runs = json.loads((tmp_path / "search_quality.quick-mfh3-runs.json").read_text())
    (run,) = runs["raysweep: tpe"]
    assert [r[0] for r in run] == list(range(1, 4 * 27 + 1))
    assert all(0 < r[1] < 600 for r in run)  # seconds after `sweep run` started, within its limit
    assert all(r[3] >= -1e-6 for r in run)


def earlier_result() -> dict[str, object]:
    """A recorded result of two problems, 2 seeds, 20 evaluations' budget."""
    return {
        "date": "2026-11-26T10:00:00Z",
        "command": "python -m benchmarks.search_quality",
        "params": {
            "problems": ["mfh3", "mfh6"],
            "seeds": [1, 2],
            "budget_full_evals": 20,
            "slots": 4,
        },
        "tables": {"mfh3": ["| a |"], "mfh6": ["| b |"]},
        "variants": {"mfh3 · raysweep: tpe": {"x": 1}, "mfh6 · raysweep: tpe": {"x": 2}},
        "targets": [{"name": "mfh3: t", "met": True}, {"name": "mfh6: t", "met": False}],
        "notes": ["mfh6 peer: dehb seed 1: not run (x)"],
    }


def test_a_subset_run_keeps_the_other_problems_figures_with_their_date() -> None:
    from benchmarks.search_quality import carry_over

    variants: dict[str, object] = {"mfh3 · raysweep: tpe": {"x": 3}}
    targets: list[dict[str, object]] = [{"name": "mfh3: t", "met": False}]
    tables, notes = {"mfh3": ["| new |"]}, []
    kept = carry_over(earlier_result(), ["mfh6"], [1, 2], 20, variants, targets, tables, notes)
    assert kept == ["mfh6"]
    assert tables == {"mfh3": ["| new |"], "mfh6": ["| b |"]}
    assert variants == {"mfh3 · raysweep: tpe": {"x": 3}, "mfh6 · raysweep: tpe": {"x": 2}}
    assert targets[1] == {"name": "mfh6: t", "met": False, "taken": "2026-11-26T10:00:00Z"}
    assert notes[0] == "mfh6 peer: dehb seed 1: not run (x)"
    assert "mfh6: figures of 2026-11-26T10:00:00Z" in notes[1]
    # other seeds or another budget: nothing is carried over
    assert carry_over(earlier_result(), ["mfh6"], [1], 20, {}, [], {}, []) == []
    assert carry_over(earlier_result(), ["mfh6"], [1, 2], 10, {}, [], {}, []) == []
    assert carry_over(None, ["mfh6"], [1, 2], 20, {}, [], {}, []) == []
    # nor from a run with another number of workers (its searchers saw other results)
    two_slots = earlier_result()
    two_slots["params"] = {**two_slots["params"], "slots": 2}  # type: ignore[dict-item]
    assert carry_over(two_slots, ["mfh6"], [1, 2], 20, {}, [], {}, []) == []


def test_figures_carried_twice_keep_the_date_and_command_they_were_taken_with() -> None:
    from benchmarks.search_quality import carry_over

    first: list[str] = []
    carry_over(earlier_result(), ["mfh6"], [1, 2], 20, {}, [], {}, first)
    later = {**earlier_result(), "date": "2026-11-28T05:00:00Z", "command": "--problems=mfh3",
             "notes": first}  # fmt: skip
    notes: list[str] = []
    targets: list[dict[str, object]] = []
    carry_over(later, ["mfh6"], [1, 2], 20, {}, targets, {}, notes)
    taken = [n for n in notes if n.startswith("mfh6: figures of ")]
    assert taken == [n for n in first if n.startswith("mfh6: figures of ")]
    assert "2026-11-26T10:00:00Z" in taken[0]


def test_the_figures_benchmarks_md_shows_are_kept_in_git_and_fill_a_fresh_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import benchmarks.search_quality as sq
    from benchmarks.harness.common import write_result

    monkeypatch.setattr(sq, "KEPT", tmp_path / "figures" / "search_quality.json")
    results = tmp_path / "results"
    (results).mkdir()
    (tmp_path / "figures").mkdir()
    assert sq.earlier_result(results, False, [1, 2], 20) is None
    shown = {**earlier_result(), "problems_run": ["mfh6"], "runs": [{"launch": 1}]}
    (results / "search_quality-mfh6.png").write_bytes(b"png6")
    (results / "search_quality-mfh3.png").write_bytes(b"png3")
    sq.keep(shown, results)
    kept = json.loads(sq.KEPT.read_text())
    assert "runs" not in kept and kept["tables"] == shown["tables"]
    # the curves of the problems this result ran, not of those it carried over
    assert (tmp_path / "figures" / "search_quality-current-mfh6.png").read_bytes() == b"png6"
    assert not (tmp_path / "figures" / "search_quality-current-mfh3.png").exists()
    # a fresh checkout (no results of its own) carries from the kept result
    assert sq.earlier_result(results, False, [1, 2], 20) == kept
    assert sq.earlier_result(results, False, [1, 2, 3], 20) is None  # other seeds
    assert sq.earlier_result(results, True, [1, 2], 20) is None  # the quick variant: never
    # a result of this checkout's own, with the same seeds and budget, comes first
    own = {**earlier_result(), "date": "2026-11-28T00:00:00Z"}
    write_result(results, "search_quality", False, own)
    assert sq.earlier_result(results, False, [1, 2], 20)["date"] == "2026-11-28T00:00:00Z"  # type: ignore[index]


def test_only_a_run_of_the_full_size_may_show_some_problems_and_name_the_rest() -> None:
    from benchmarks.search_quality import FULL_TRIALS, SEEDS, default_size

    seeds = list(range(1, 1 + SEEDS))
    assert default_size(False, seeds, FULL_TRIALS)
    assert not default_size(True, seeds, FULL_TRIALS)
    assert not default_size(False, seeds[:-1], FULL_TRIALS)
    assert not default_size(False, seeds, FULL_TRIALS // 2)


def test_a_subset_run_with_nothing_to_fill_the_rest_leaves_benchmarks_md_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import benchmarks.search_quality as sq
    from benchmarks.harness.cli import parser, refresh_markdown, run_and_report

    monkeypatch.setattr(sq, "KEPT", tmp_path / "kept.json")
    markdown = tmp_path / "BENCHMARKS.md"
    markdown.write_text("# raysweep benchmarks\n\nby hand\n")

    def run(partial: bool, **_: object) -> dict[str, object]:
        result = {"title": "T", "params": {}, "variants": {}, "targets": [], "runs": []}
        return {**result, "partial": "problems ['mfh6'] were not run"} if partial else result

    args = parser("t").parse_args(["--results-dir", str(tmp_path), "--markdown", str(markdown)])
    run_and_report("search_quality", lambda **kw: run(True, **kw), args)
    assert markdown.read_text() == "# raysweep benchmarks\n\nby hand\n"
    # make bench's path (benchmarks.run) as well
    partial = {"benchmark": "search_quality", **run(True)}
    refresh_markdown(markdown, tmp_path, [partial])
    assert markdown.read_text() == "# raysweep benchmarks\n\nby hand\n"
    assert not sq.KEPT.exists()
    run_and_report("search_quality", lambda **kw: run(False, **kw), args)
    assert "<!-- bench:targets:start -->" in markdown.read_text()
    assert json.loads(sq.KEPT.read_text())["title"] == "T"  # the result shown, kept


def test_recipes_or_peers_left_out_are_named_so_benchmarks_md_is_left_alone() -> None:
    from benchmarks.search_quality import PEERS, left_out_optimizers

    assert left_out_optimizers(tuple(RECIPES), PEERS, quick=False) == []
    assert left_out_optimizers(tuple(RECIPES), PEERS[1:], quick=False) == [PEERS[0]]
    assert left_out_optimizers(["tpe"], ["optuna-tpe"], quick=True) == []
    assert "random" in left_out_optimizers(["tpe"], PEERS, quick=False)


def test_the_default_run_holds_the_recipes_users_pick_and_studies_run_when_named() -> None:
    from benchmarks.search_quality import PEERS, left_out_optimizers
    from benchmarks.workloads.search_quality_recipes import DEFAULT_RECIPES, STUDIES

    assert set(STUDIES) <= set(RECIPES) and not set(STUDIES) & set(DEFAULT_RECIPES)
    # the recipes, and the searchers added since
    for name in ("random", "grid (3 levels)", "hyperopt", "tpe", "tpe + asha",
                 "random + hyperband", "tpe strict batch 4", "gp", "cmaes"):  # fmt: skip
        assert name in DEFAULT_RECIPES
    assert left_out_optimizers(DEFAULT_RECIPES, PEERS, quick=False) == []
    # a study named beside the defaults leaves nothing out: its figures join the tables
    assert left_out_optimizers((*DEFAULT_RECIPES, STUDIES[0]), PEERS, quick=False) == []


def test_a_recipe_pays_every_report_and_a_restart_again(tmp_path: Path) -> None:
    """Hyperband on Ray runs a paused trial without a checkpoint again from its start."""
    from benchmarks.workloads.search_quality_recipes import observations

    from raysweep.rundir import Part, RunDir

    problem = PROBLEMS["mfh3"]
    run = RunDir(tmp_path / "run")
    run.path.mkdir()
    run.mark("running")
    run.set_parts([Part("tune", 2)])
    good, bad = dict.fromkeys(problem.names, 0.5), dict.fromkeys(problem.names, 0.0)
    trials = [{"trial_id": "a", "config": good}, {"trial_id": "b", "config": bad}]
    (run.path / "results.json").write_text(json.dumps({"metric": "value", "trials": trials}))
    starts = [("a", 100.0), ("b", 101.0), ("a", 110.0)]  # "a" paused after 2 steps, restarted
    (run.path / "trial_info.jsonl").write_text(
        "".join(json.dumps({"trial_id": t, "event": "start", "t": at}) + "\n" for t, at in starts)
    )
    rows = {"a": [(1, 0.5, -1.0), (2, 1.0, -2.0), (1, 0.5, -1.0), (2, 1.0, -2.0), (3, 1.5, -3.0)],
            "b": [(1, 0.2, 0.0)]}  # fmt: skip
    for trial_id, made in rows.items():
        folder = run.path / "tune" / f"trial_{trial_id}"
        folder.mkdir(parents=True)
        folder.joinpath("result.json").write_text("".join(json.dumps(
            {"trial_id": trial_id, "training_iteration": i, "time_total_s": s, "value": v}) + "\n"
            for i, s, v in made))  # fmt: skip
    got = observations(run.path, problem, popen_t=100.0)
    assert [r[0] for r in got] == [1, 2, 3, 4, 5, 6]
    assert [r[1] for r in got] == pytest.approx([0.5, 1.0, 1.2, 10.5, 11.0, 11.5])
    assert [r[2] for r in got] == [-1.0, -2.0, 0.0, -1.0, -2.0, -3.0]
    assert [r[4] for r in got] == [1, 2, 1, 1, 2, 3]  # the fidelity of each report
    assert got[2][3] == problem.regret(bad) and got[0][3] == problem.regret(good)


def test_the_best_recipe_is_judged_at_every_fraction_not_only_at_the_end() -> None:
    """A recipe best at the end but far behind mid-budget is not "the best recipe"."""
    from benchmarks.search_quality import targets_for

    late = [[10, 1.0, 0.0, 9.0], [100, 2.0, -1.0, 0.1]]  # best at 100%, 9x behind at 25-50%
    steady = [[20, 1.0, 0.0, 1.0], [40, 2.0, -1.0, 0.5], [100, 3.0, -2.0, 0.3]]
    peer = [[20, 1.0, 0.0, 1.0], [45, 2.0, -1.0, 0.5], [100, 3.0, -2.0, 0.2]]
    runs = {"raysweep: late": [late] * 3, "raysweep: steady": [steady] * 3, "peer: p": [peer] * 3}
    got = targets_for("mfh3", runs, budget=100)
    assert [t["name"].split(" / ")[0] for t in got] == ["mfh3: steady"] * 3
    assert [t["value"] for t in got] == pytest.approx([1.0, 1.0, 1.5])


def test_a_run_that_finds_the_optimum_counts_as_regret_zero_not_as_missing() -> None:
    """On a table the optimum is reachable: a regret of 0 is the best value, not "none yet"."""
    from benchmarks.search_quality import targets_for

    found = [[10, 1.0, 0.5, 0.5], [60, 2.0, 0.1, 0.0]]  # the optimum at 60% of the budget
    near = [[10, 1.0, 0.5, 0.5], [60, 2.0, 0.2, 0.1]]
    runs = {"raysweep: tpe": [found] * 3, "raysweep: tpe strict batch 4": [found] * 3,
            "peer: near": [near] * 3, "peer: found": [found] * 3}  # fmt: skip
    got = {t["name"]: t["value"] for t in targets_for("mfh3", runs, budget=100)}
    (at_end,) = [
        k for k in got if k.startswith("mfh3: tpe / best peer (found) median regret at 100%")
    ]
    assert got[at_end] == 1.0
    assert got["mfh3: tpe strict batch 4 / tpe median final regret"] == 1.0


def test_against_a_peer_whose_median_found_the_optimum_ours_must_be_inside_its_interval() -> None:
    """A ratio to a median of 0 is infinite for any regret: the bound must not be too."""
    from benchmarks.search_quality import targets_for

    optimum = [[10, 1.0, 0.5, 0.0]]
    near = [[10, 1.0, 0.5, 0.01]]
    far = [[10, 1.0, 0.5, 0.5]]
    peer = [optimum] * 7 + [near] * 3  # median 0, the interval's high end 0.01
    for ours, met in (([far] * 10, False), ([near] * 10, True), ([optimum] * 10, True)):
        got = targets_for("nb201", {"raysweep: tpe": ours, "peer: p": peer}, budget=100)
        assert [t["met"] for t in got] == [met] * 3, got


def test_the_problems_where_raysweep_ends_below_every_peer_are_counted() -> None:
    from benchmarks.search_quality import ahead_of_every_peer

    def row(median: float) -> dict[str, object]:
        return {"regret_100pct": {"median": median}}

    variants = {
        "mfh3 · raysweep: tpe": row(0.5), "mfh3 · raysweep: tpe + asha": row(0.1),
        "mfh3 · peer: dehb": row(0.2), "mfh3 · peer: smac-mf": row(0.3),
        "mfh6 · raysweep: tpe": row(0.5), "mfh6 · peer: dehb": row(0.4),
        "lgbm · raysweep: tpe": row(0.5),  # no peer ran: not counted either way
    }  # fmt: skip
    assert ahead_of_every_peer(variants) == ["mfh3"]
    variants["mfh3 · peer: smac-mf"] = row(0.1)  # a tie is not ahead
    assert ahead_of_every_peer(variants) == []
    assert ahead_of_every_peer({"mfh3 · raysweep: tpe": row(0.5)}) is None


def test_the_asha_rule_comparison_runs_every_rule_on_the_same_budget() -> None:
    from benchmarks import asha_rule

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
    ray, rank = asha_rule.ray_pruner(max_t=27), asha_rule.ray_pruner(max_t=27, rank=True)
    assert [ray.prune(None, Trial(n, v)) for n, v in enumerate(losses)] == [
        False, False, False, False, True]  # fmt: skip
    assert [rank.prune(None, Trial(n, v)) for n, v in enumerate(losses)] == [
        False, False, True, False, True]  # fmt: skip


def test_reuse_never_takes_a_run_recorded_under_another_resolved_spec(tmp_path: Path) -> None:
    """A recipe whose spec resolves otherwise today (a default changed: ASHA's rung rule)
    is recorded under another name, so ``--reuse`` runs it again."""
    from benchmarks import search_quality as sq

    recorded = [[1.0, 0.1, 0.5, 0.5, 1.0]]
    for seed in (1, 2):
        sq._keep({}, "raysweep: tpe + asha", recorded, [], tmp_path, "mfh3", seed, 20)
    assert sq._cached(True, tmp_path, "mfh3", "raysweep: tpe + asha", 2, 20) == recorded
    assert sq._cached(True, tmp_path, "mfh3", "raysweep: tpe + asha (ray's rule)", 2, 20) is None
    today = sq._cache_path(tmp_path, "mfh3", "raysweep: tpe + asha", 1, 20)
    digest = resolved_digest("tpe + asha", "mfh3", 20)
    assert digest in today.name
    today.rename(today.with_name(today.name.replace(digest, "0" * 8)))  # an older default's
    assert sq._cached(True, tmp_path, "mfh3", "raysweep: tpe + asha", 1, 20) is None
