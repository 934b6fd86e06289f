"""The return-rule study reads each rule as PROTOCOL.md defines it, on hand-made reports."""

from __future__ import annotations

from benchmarks.standalone.return_rule import Report, returned

A, B, C, D = (("x", 1.0),), (("x", 2.0),), (("x", 3.0),), (("x", 4.0),)
# A is best at fidelity 1 and stopped there; B, C and D reach fidelity 3; only D reaches 9
REPORTS = [
    Report(1, A, 1, 0.1),
    Report(2, B, 1, 0.5),
    Report(3, C, 1, 0.6),
    Report(4, D, 1, 0.7),
    Report(5, B, 3, 0.4),
    Report(6, C, 3, 0.3),
    Report(7, D, 3, 0.35),
    Report(8, D, 9, 0.2),
]


def test_best_returns_the_best_value_at_any_fidelity() -> None:
    chosen = returned(REPORTS, "best", max_fidelity=9, quorum=3)
    assert chosen is not None and chosen.trial == A


def test_complete_returns_the_best_trial_at_the_maximum_fidelity_else_best() -> None:
    chosen = returned(REPORTS, "complete", max_fidelity=9, quorum=3)
    assert chosen is not None and chosen.trial == D
    early = returned(REPORTS[:7], "complete", max_fidelity=9, quorum=3)  # none reached 9 yet
    assert early is not None and early.trial == A


def test_populated_ranks_at_the_highest_fidelity_enough_trials_reached() -> None:
    chosen = returned(REPORTS, "populated", max_fidelity=9, quorum=3)  # 9 has one trial: 3 rules
    assert chosen is not None and chosen.trial == C
    two = returned(REPORTS[:6], "populated", max_fidelity=9, quorum=3)  # 3 has two: 1 rules
    assert two is not None and two.trial == A
    assert returned(REPORTS[:2], "populated", max_fidelity=9, quorum=3) == REPORTS[0]  # fallback
    assert returned([], "populated", max_fidelity=9, quorum=3) is None
