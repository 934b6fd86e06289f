"""engines/ray/tuner.py: the one Tuner builder, for a run's experiment and with the overrides the
GPU probe and ``sweep repro`` use (Ray's own objects, nothing started)."""

from __future__ import annotations

from pathlib import Path

from ray.tune.schedulers import AsyncHyperBandScheduler, FIFOScheduler

from factories import make_spec
from raysweep.engines.ray.tuner import BuildOptions, build_plan, build_tuner_parts
from raysweep.schedulers.build import TIME_ATTR
from raysweep.search.indexed import INDEX_KEY

SPACE = {"x": {"type": "uniform", "low": 0, "high": 1}, "steps": 6}


def test_a_runs_experiment_follows_the_spec(tmp_path: Path) -> None:
    spec = make_spec(
        space=SPACE,
        search={"algorithm": "random", "num_samples": 5, "max_concurrent": 2},
        scheduler={"type": "asha", "max_t": 6, "grace_period": 2},
        stop={"max_iterations": 4, "time_budget_s": 60},
        max_failures=2,
    )
    parts = build_tuner_parts(spec, BuildOptions(run_dir=tmp_path / "run"))
    tune_config, run_config = parts.tune_config, parts.run_config
    assert (tune_config.metric, tune_config.mode) == ("loss", "min")
    assert tune_config.num_samples == 5 and tune_config.search_alg is not None
    assert isinstance(tune_config.scheduler, AsyncHyperBandScheduler)
    assert tune_config.time_budget_s == 60 and tune_config.reuse_actors
    assert parts.param_space == {"steps": 6}  # the constants; Ray merges them into each config
    assert run_config.name == "tune" and run_config.storage_path == str(tmp_path / "run")
    assert run_config.stop == {TIME_ATTR: 4}
    assert run_config.failure_config is not None
    assert run_config.failure_config.max_failures == 2


def test_a_fixed_trial_runs_once_under_fifo_with_its_overrides(tmp_path: Path) -> None:
    spec = make_spec(space=SPACE, scheduler={"type": "asha", "max_t": 6, "grace_period": 2})
    options = BuildOptions(
        run_dir=tmp_path, experiment="probe", fixed_trial=({"x": 0.3}, 4), fifo=True,
        stop={TIME_ATTR: 1}, time_budget_s=30, max_failures=0,
    )  # fmt: skip
    parts = build_tuner_parts(spec, options)
    assert parts.param_space == {"x": 0.3, INDEX_KEY: 4}
    assert parts.tune_config.search_alg is None and parts.tune_config.num_samples == 1
    assert isinstance(parts.tune_config.scheduler, FIFOScheduler)
    assert parts.tune_config.time_budget_s == 30
    assert parts.run_config.name == "probe" and parts.run_config.stop == {TIME_ATTR: 1}
    assert parts.run_config.failure_config is not None
    assert parts.run_config.failure_config.max_failures == 0


def test_the_trial_plan_carries_the_spec_and_falls_back_to_cpus(tmp_path: Path) -> None:
    spec = make_spec(
        seed=7,
        trainable_args={"rows": 10},
        resources={"cpus_per_trial": 2, "gpus_per_trial": 0.5},
        checkpoint={"frequency": 3, "num_to_keep": 1},
    )
    plan = build_plan(spec, BuildOptions(run_dir=tmp_path, info_path=tmp_path / "info.jsonl"))
    assert (plan.trainable, plan.master_seed, plan.cpus) == ("examples.quadratic:fit", 7, 2)
    assert plan.trainable_args == {"rows": 10} and plan.checkpoint_frequency == 3
    assert plan.gpu_fraction == 0.5 and plan.info_path == str(tmp_path / "info.jsonl")
    on_cpus = build_plan(spec, BuildOptions(run_dir=tmp_path, cpu_fallback=True))
    assert on_cpus.gpu_fraction == 0.0 and on_cpus.info_path is None
