"""What "the same seed" repeats, said in one line at the start of ``sweep run``."""

from __future__ import annotations

from typing import Any

import pytest

from factories import make_spec
from raysweep.repro.scope import STRICT_SETTING, guarantee, repeat_scope, sweep_scope

TPE = {"algorithm": "optuna", "num_samples": 8, "max_concurrent": 2}
ASHA = {"type": "asha", "max_t": 4}


@pytest.mark.parametrize(
    ("fields", "why"),
    [
        ({"search": {**TPE, "max_concurrent": 1}, "scheduler": ASHA}, "one trial at a time"),
        ({"search": TPE, "reproducibility": {"strict": True}}, "strict mode"),
        ({"search": {"algorithm": "random", "num_samples": 8}}, "random search without early"),
    ],
)
def test_the_whole_sweep_repeats(fields: dict[str, Any], why: str) -> None:
    spec = make_spec(**fields)
    assert sweep_scope(spec).whole
    assert repeat_scope(spec).startswith(f"Same seed, same sweep ({why}")
    assert not guarantee(spec).startswith("per-trial")


def test_a_model_based_searcher_at_several_slots_repeats_each_trial_only() -> None:
    line = repeat_scope(make_spec(search=TPE))
    assert line.startswith("Same seed, same trials, not the same sweep: each trial repeats")
    assert "optuna's suggestions depend on the order results arrive (2 trials at a time)" in line
    assert line.endswith(f"for the whole sweep to repeat, set {STRICT_SETTING}")


def test_early_stopping_names_the_setting_strict_mode_takes() -> None:
    # strict mode takes ASHA: the setting that makes the whole sweep repeat is strict mode
    spec = make_spec(search={"algorithm": "random", "num_samples": 8}, scheduler=ASHA)
    line = repeat_scope(spec)
    assert "asha's early stops depend on the order results arrive (several trials at" in line
    assert line.endswith(f"for the whole sweep to repeat, set {STRICT_SETTING}")
    assert guarantee(spec).startswith("per-trial only")


def test_a_scheduler_strict_mode_refuses_names_one_trial_at_a_time() -> None:
    median = {"type": "median", "grace_period": 1}
    spec = make_spec(search={"algorithm": "random", "num_samples": 8}, scheduler=median)
    line = repeat_scope(spec)
    assert "median's early stops depend on the order results arrive" in line
    assert 'set "search": {"max_concurrent": 1} (strict mode does not take this config: ' in line
    assert "\n" not in line


def test_a_time_budget_is_never_the_whole_sweep() -> None:
    spec = make_spec(stop={"time_budget_s": 60}, reproducibility={"strict": True})
    scope = sweep_scope(spec)
    assert not scope.whole and "stop.time_budget_s 60" in scope.why
    assert repeat_scope(spec).endswith("leave out stop.time_budget_s (search.num_samples and "
                                       "stop.max_iterations bound a sweep without depending "
                                       "on speed)")  # fmt: skip
