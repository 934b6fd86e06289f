"""The contract every engine keeps: seeded runs repeat, engines agree, refusals are named.

At one slot the Ray engine and the local engine make the same calls into the same
searcher and scheduler, so every trial index gets the same config, seed, metrics
and status either way.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_helpers import contract_sweep, run_contract_sweep, trials_by_index

from raysweep.errors import ConfigError

SCHEDULERS = ("fifo", "asha", "median")
SEEDS = {"mf-tpe": {"seed": 3}}  # a seed at which ASHA stops trials (1 stops none of its)


def test_the_same_seed_twice_gives_identical_trials(tmp_path: Path, engine: str) -> None:
    data = contract_sweep(f"twice-{engine}", "optuna", "asha", engine)
    code, first, out = run_contract_sweep(tmp_path / "a", data)
    assert code == 0, out
    code, second, out = run_contract_sweep(tmp_path / "b", data)
    assert code == 0, out
    trials = trials_by_index(first)
    assert sorted(trials) == list(range(4))
    assert trials == trials_by_index(second)


@pytest.mark.parametrize(
    ("algorithm", "scheduler"),
    [
        *((a, s) for a in ("grid", "random", "optuna", "hyperopt") for s in SCHEDULERS),
        ("mf-tpe", "asha"),  # the multi-fidelity searcher, with the scheduler it is for
    ],
)
def test_ray_and_local_agree_index_by_index_at_one_slot(
    tmp_path: Path, ray_session: None, algorithm: str, scheduler: str
) -> None:
    runs = {}
    for engine in ("ray", "local"):
        data = contract_sweep(f"{algorithm}-{scheduler}-{engine}", algorithm, scheduler, engine,
                              **SEEDS.get(algorithm, {}))  # fmt: skip
        code, run_dir, out = run_contract_sweep(tmp_path, data)
        assert code == 0, out
        runs[engine] = trials_by_index(run_dir)
    assert len(runs["local"]) == 4
    assert runs["ray"] == runs["local"]
    statuses = [trial[4] for trial in runs["local"].values()]
    if scheduler != "fifo":  # the scheduler decided something: its decisions are compared
        assert "stopped" in statuses, statuses


# What each engine refuses, named in its error (exit 2, nothing written).
REFUSED_SCHEDULERS = {"local": {"hyperband"}, "ray": set()}


@pytest.mark.parametrize("scheduler", ["hyperband", "asha"])
def test_an_engine_refuses_what_it_cannot_run_by_name(
    tmp_path: Path, engine: str, scheduler: str
) -> None:
    """The local engine cannot pause and resume trials (hyperband); Ray takes every scheduler."""
    data = contract_sweep(f"plan-{engine}-{scheduler}", "random", "fifo", engine)
    data["scheduler"] = {"type": scheduler, "max_t": 4, "reduction_factor": 2}
    if scheduler in REFUSED_SCHEDULERS[engine]:
        with pytest.raises(ConfigError, match=f"execution.*{scheduler}") as refused:
            run_contract_sweep(tmp_path, data, dry_run=True)
        assert refused.value.exit_code == 2
    else:
        code, _, out = run_contract_sweep(tmp_path, data, dry_run=True)
        assert code == 0, out
        assert f"{data['search']['num_samples']} (random, {scheduler})" in out
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(
    ("algorithm", "scheduler", "schedule"),
    [
        *((a, "fifo", s) for a in ("optuna", "hyperopt") for s in ("batch", "window")),
        ("mf-tpe", "asha", "window"),  # strict early stopping
    ],
)
def test_ray_and_local_agree_in_strict_mode_at_two_slots(
    tmp_path: Path, ray_session: None, algorithm: str, scheduler: str, schedule: str
) -> None:
    """Strict batches: the searcher sees each batch's results in index order on either
    engine; strict ASHA decides each rung from the trials settled before the trial."""
    runs = {}
    for engine in ("ray", "local"):
        name = f"strict-{algorithm}-{scheduler}-{schedule}-{engine}"
        data = contract_sweep(name, algorithm, scheduler, engine, **SEEDS.get(algorithm, {}),
                              reproducibility={"strict": True, "batch_size": 2,
                                               "strict_schedule": schedule})  # fmt: skip
        data["search"]["max_concurrent"] = 2
        code, run_dir, out = run_contract_sweep(tmp_path, data)
        assert code == 0, out
        runs[engine] = trials_by_index(run_dir)
    assert len(runs["local"]) == 4
    assert runs["ray"] == runs["local"]
    if scheduler == "asha":  # strict ASHA decided something: its decisions are compared
        assert "stopped" in [trial[4] for trial in runs["local"].values()]
