"""The search-quality protocol's scoring on hand-made runs: what each optimizer returns,
the best peer per point, the plain ratio, the Wilcoxon p, the targets."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from benchmarks.harness.protocol import cell, ratio, score, strict_target, targets, wilcoxon_p
from benchmarks.harness.regret import regret_at, returned_at
from benchmarks.workloads.search_quality_clock import Record
from benchmarks.workloads.search_quality_problems import PROBLEMS

from factories import recorded_run


def flat(regret: float, own: float | None = None) -> list[list[object]]:
    """A run whose one observation, at budget 1, returns ``regret``."""
    return [[1, 0.1, 0.0, regret, 1, regret if own is None else own]]


def test_an_optimizer_returns_its_own_incumbent_else_the_best_value_observed() -> None:
    # [used, wall, value, regret of this config, fidelity, regret of the own incumbent]
    run = [[1, 0.1, -5.0, 3.0, 1, None],  # a short run that looks best; none complete yet
           [2, 0.2, -1.0, 2.0, 3, 2.0],  # the first complete trial: the own incumbent
           [3, 0.3, -0.5, 9.0, 3, 2.0],
           [4, 0.4, -9.0, 0.1, 1, 2.0]]  # fmt: skip
    assert returned_at(run, 0.5) is None  # nothing observed yet
    assert returned_at(run, 1) == 3.0  # the fallback: the best value observed, at any fidelity
    assert [returned_at(run, b) for b in (2, 3, 4)] == [2.0, 2.0, 2.0]
    assert [regret_at(run, b) for b in (1, 2, 3, 4)] == [3.0, 3.0, 3.0, 0.1]


def test_the_ratio_is_plain_and_zero_over_zero_is_one() -> None:
    assert ratio(0.3, 0.2) == pytest.approx(1.5)
    assert ratio(0.0, 0.0) == 1.0
    assert ratio(0.1, 0.0) == math.inf


def test_wilcoxon_p_on_a_hand_made_set() -> None:
    # 6 seeds, raysweep lower on every one: the exact two-sided p is 2 / 2**6
    assert wilcoxon_p([1, 2, 3, 4, 5, 6], [2, 4, 6, 8, 10, 12]) == pytest.approx(2 / 64)
    # ranks of |d| = 1..6, the one positive difference has rank 1: T = 1, P(T <= 1) = 2/64
    assert wilcoxon_p([2, 1, 2, 3, 4, 5], [1, 3, 5, 7, 9, 11]) == pytest.approx(4 / 64)
    assert wilcoxon_p([1, 2, 3], [1, 2, 3]) == 1.0  # every seed equal
    # zsplit: ties count, half on each side: 3 ties and 3 lower is weak evidence
    assert 0.05 < wilcoxon_p([1, 1, 1, 1, 1, 1], [1, 1, 1, 2, 3, 4]) < 0.5
    # nothing returned yet (infinite regret) ranks above every finite one
    assert wilcoxon_p([1, 2, 3, 4, 5, 6], [math.inf] * 6) == pytest.approx(2 / 64)


def test_the_best_peer_is_chosen_at_each_point_and_seeds_are_counted_paired() -> None:
    """Peer "early" leads at 10%, peer "late" at 100%: each is the best where it leads."""
    budget = 100

    def run(at_10: float, at_100: float) -> list[list[object]]:
        return [[10, 1.0, 0.0, at_10, 1, at_10], [100, 2.0, -1.0, at_100, 3, at_100]]

    ours = {s: run(1.0, 0.2 + s / 100) for s in range(1, 7)}
    peers = {"peer: early": {s: run(0.5, 0.5) for s in range(1, 7)},
             "peer: late": {s: run(2.0, 0.3) for s in range(1, 7)}}  # fmt: skip
    cells = score(ours, peers, budget)
    assert [cells[p]["best_peer"] for p in ("10%", "25%", "100%")] == [
        "peer: early", "peer: early", "peer: late"]  # fmt: skip
    assert cells["10%"]["ratio"] == pytest.approx(2.0) and cells["10%"]["higher"] == 6
    final = cells["100%"]
    assert final["median"] == pytest.approx(0.235) and final["ratio"] == pytest.approx(0.235 / 0.3)
    assert (final["lower"], final["equal"], final["higher"]) == (6, 0, 0)
    assert final["p"] == pytest.approx(2 / 64) and final["below_every_peer"]
    # a seed a peer did not run is left out of every comparison at that point
    del peers["peer: late"][6]
    assert score(ours, peers, budget)["100%"]["seeds"] == 5


def test_the_targets_say_met_or_missed_per_row_and_count_the_problems_ahead() -> None:
    def c(ratio_: float, p: float, below: bool) -> dict[str, object]:
        return {"best_peer": "peer: x", "ratio": ratio_, "p": p, "lower": 1, "equal": 0,
                "higher": 0, "below_every_peer": below}  # fmt: skip

    ahead = {p: c(0.5, 0.01, True) for p in ("25%", "50%", "100%")}
    cells = {"mfh3": ahead, "mfh6": {**ahead, "25%": c(1.2, 0.3, False)},
             "lgbm": {**ahead, "100%": c(0.9, 0.2, True)},  # below, but not significant
             "hpolib": {"10%": c(9.0, 0.01, False), "50%": c(1.0, 1.0, False),
                        "100%": c(1.01, 0.5, False)}}  # fmt: skip
    fidelity = {"mfh3": True, "mfh6": True, "lgbm": True, "hpolib": False}
    got = {t["name"].split(" (")[0] + " " + t["name"].split(" at ")[-1].split(" ")[0]: t
           for t in targets(cells, fidelity)}  # fmt: skip
    assert got["mfh6: default / best peer 25%"]["met"] is False
    assert got["mfh6: default / best peer 50%"]["met"] is True
    assert got["hpolib: default / best peer 50%"]["met"] is True  # 1.0x is within <= 1.0
    assert got["hpolib: default / best peer 100%"]["met"] is False
    assert not any(k.startswith("hpolib") and k.endswith("10%") for k in got)
    (count,) = [t for t in targets(cells, fidelity) if t["name"].startswith("problems")]
    assert count["value"] == 2 and count["met"] and "mfh3, mfh6" in count["name"]


def test_strict_modes_target_is_its_median_over_the_defaults() -> None:
    strict = {s: flat(1.1 * s) for s in range(1, 4)}
    plain = {s: flat(1.0 * s) for s in range(1, 4)}
    got = strict_target("mfh3", strict, plain, 1, 0.875)
    assert got["value"] == pytest.approx(1.1) and got["met"] and "slot use 0.875" in got["name"]
    assert not strict_target("mfh3", {1: flat(2.0)}, {1: flat(1.0)}, 1, None)["met"]
    assert cell({1: 0.0}, {"peer: p": {1: 0.0}})["ratio"] == 1.0


def test_a_peer_without_an_api_incumbent_returns_its_best_value_told() -> None:
    """Syne Tune's rule (``ExperimentResult.best_config``): the best result at any
    fidelity, once told; an optimizer's own one where it names it."""
    problem = PROBLEMS["mfh3"]
    good, bad = dict.fromkeys(problem.names, 0.5), dict.fromkeys(problem.names, 0.0)
    record = Record(problem, budget=10)
    record.observe(bad, 1, 1)
    record.observe(good, 27, 1)
    assert record.observations[1][5] is None  # observed, not told yet
    record.told(0)
    record.told(1)
    assert [r[5] for r in record.observations] == [problem.regret(bad), problem.regret(good)]
    record = Record(problem, budget=10, own=lambda: None)
    record.observe(good, 27, 1)
    record.told(0)
    assert record.observations[0][5] is None  # the optimizer names none: the harness falls back
    record.own = lambda: bad
    record.told(0)
    assert record.observations[0][5] == problem.regret(bad)


@pytest.mark.parametrize(
    ("rank_by", "returned"), [("best", "abbb"), ("last", "abaa")]
)  # fmt: skip
def test_sweep_best_is_scored_under_the_sweeps_rank_by(
    tmp_path: Path, rank_by: str, returned: str
) -> None:
    """a: 3 reports, best first (-3, -2, -1); b: one report of -5, then stopped. By its best
    value b leads from its report on; by its last value b is cut short once a runs longer."""
    from benchmarks.workloads.search_quality_sweep_record import observations

    problem = PROBLEMS["mfh3"]
    configs = {"a": dict.fromkeys(problem.names, 0.5), "b": dict.fromkeys(problem.names, 0.1)}
    trials = [
        {"trial_id": "a", "index": 0, "status": "completed", "config": configs["a"]},
        {"trial_id": "b", "index": 1, "status": "stopped", "config": configs["b"]},
    ]
    results = {"metric": "value", "mode": "min", "rank_by": rank_by, "trials": trials}
    rows = {"a": [(1, 1.0, -3.0), (2, 2.0, -2.0), (3, 3.0, -1.0)], "b": [(1, 1.5, -5.0)]}
    run = recorded_run(tmp_path / "run", results, [("a", 100.0), ("b", 100.0)], rows)
    got = observations(run, problem, popen_t=100.0)
    assert [r[2] for r in got] == [-3.0, -5.0, -2.0, -1.0]
    assert [r[5] for r in got] == [problem.regret(configs[t]) for t in returned]


def test_the_section_shows_each_points_best_peer_ratio_p_and_counts() -> None:
    from benchmarks.harness.quality_section import problem_lines, ratio_table

    cells = {"25%": {"best_peer": "peer: dehb", "peer_median": 0.5, "median": 0.25,
                     "ratio": 0.5, "p": 0.0123, "lower": 20, "equal": 3, "higher": 7,
                     "seeds": 30}}  # fmt: skip
    (row,) = ratio_table(cells)[2:]
    assert row == "| 25% | dehb | 0.5 | 0.25 | 0.5x | 0.012 | 20 / 3 / 7 | 30 |"
    block = {"seeds": list(range(1, 31)), "full_evals": 20, "fidelity_steps": 27,
             "default": "tpe + asha", "cells": cells, "ratio_table": ratio_table(cells),
             "table": ["| optimizer |"], "notes": ["mfh3 a note"],
             "taken": "2026-11-28"}  # fmt: skip
    text = "\n".join(problem_lines({"mfh3": block}, quick=False))
    assert "PROTOCOL.md" in text and "never on wall time" in text
    assert "| mfh3 | 30 | `tpe + asha` | 0.5x dehb, p 0.012, 20/3/7 |" in text
    assert "**mfh3** (20 full-fidelity evaluations' budget" in text
    assert "figures of 2026-11-28" in text and "> mfh3 a note" in text
    assert "[figures/search_quality-mfh3.png](figures/search_quality-mfh3.png)" in text
