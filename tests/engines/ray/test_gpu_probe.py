"""gpus_per_trial "auto" in a run directory: the cap, the recorded packing, the probe's trial."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from factories import make_spec
from raysweep.config.load import parse_spec, spec_to_json
from raysweep.config.resources import UnresolvedGpusError
from raysweep.config.schema import SweepSpec
from raysweep.engines.ray.gpu_probe import _probe_trial, packing_cap
from raysweep.errors import ResumeError
from raysweep.gpu.planning import recorded_spec
from raysweep.rundir import RunDir


def auto_spec(cpus: int = 1, max_concurrent: int | None = None) -> SweepSpec:
    """4 trials, ``cpus`` CPUs and ``"auto"`` GPUs each; no concurrency limit unless given."""
    search: dict[str, Any] = {"algorithm": "random", "num_samples": 4}
    if max_concurrent:
        search["max_concurrent"] = max_concurrent
    resources = {"cpus_per_trial": cpus, "gpus_per_trial": "auto"}
    return make_spec(name="a", search=search, resources=resources)


@pytest.mark.parametrize(
    ("cpus", "max_concurrent", "cpu_count", "gpus", "cap"),
    [
        (1, None, 16, 1, 8),  # an H100 box: at most 8
        (1, None, 16, 4, 4),  # 16 CPU slots over 4 GPUs
        (2, None, 16, 1, 8),
        (4, None, 16, 1, 4),
        (1, 2, 16, 1, 2),  # max_concurrent 2 on one GPU
        (1, 6, 16, 4, 2),  # 6 over 4 GPUs -> 2 per GPU
        (8, None, 4, 1, 1),  # fewer CPUs than one trial takes
    ],
)
def test_packing_cap(
    cpus: int, max_concurrent: int | None, cpu_count: int, gpus: int, cap: int
) -> None:
    spec = auto_spec(cpus, max_concurrent)
    assert packing_cap(spec, gpus, {"CPU": float(cpu_count), "GPU": float(gpus)}) == cap


def test_recorded_packing_resolves_auto(tmp_path: Path) -> None:
    spec = auto_spec()
    run_dir = RunDir(tmp_path)
    assert run_dir.read_packing() is None
    assert recorded_spec(spec, run_dir) is spec  # nothing recorded: still "auto"
    with pytest.raises(UnresolvedGpusError):
        _ = spec.resources.gpus_per_trial
    run_dir.packing_path.write_text(json.dumps({"gpus_per_trial": 0.125}))
    resolved = recorded_spec(spec, run_dir)
    assert resolved.resources.gpus_per_trial == 0.125
    assert not resolved.resources.gpus_auto
    assert spec_to_json(spec)["resources"]["gpus_per_trial"] == "auto"  # the original is kept
    number = spec.with_gpus_per_trial(0.5)
    assert recorded_spec(number, run_dir) is number  # a number is never replaced


@pytest.mark.parametrize("content", ['{"trials_per_gpu": 4}', '{"gpus_per_trial": 0}', "{"])
def test_corrupt_record_is_a_resume_error(tmp_path: Path, content: str) -> None:
    RunDir(tmp_path).packing_path.write_text(content)
    with pytest.raises(ResumeError, match=r"gpu_auto\.json is unreadable or corrupt"):
        recorded_spec(auto_spec(), RunDir(tmp_path))


def test_probe_trial_is_read_from_trial_info(tmp_path: Path) -> None:
    path = tmp_path / "trial_info.jsonl"
    assert _probe_trial(path) is None
    path.write_text('{"trial_id": "a", "event": "start", "gpu_ids": ["3"], "pid": 4242}\n{torn')
    assert _probe_trial(path) == (4242, 3)
    path.write_text('{"trial_id": "a", "event": "start", "gpu_ids": [], "pid": 1}\n')
    assert _probe_trial(path) is None


def test_probe_options_run_the_first_trial_alone_on_a_whole_gpu(
    ray_session: None, tmp_path: Path
) -> None:
    """On Ray's logical GPUs: one trial, one whole GPU, stopped after the probe's iterations."""
    from raysweep.engines.ray.fit import run_tuner
    from raysweep.engines.ray.gpu_probe import probe_options
    from raysweep.gpu.planning import PROBE_ITERATIONS

    data = spec_to_json(auto_spec())
    data["space"]["steps"] = 50
    data["scheduler"] = {"type": "asha", "max_t": 50, "grace_period": 1}
    spec = parse_spec(data)
    run_dir, probe = RunDir(tmp_path), RunDir(RunDir(tmp_path).probe_dir)
    probe.path.mkdir()
    trials = run_tuner(spec.with_gpus_per_trial(1.0), probe_options(spec, probe.path, None, None))
    assert len(trials) == 1 and str(trials[0].status) == "TERMINATED"
    assert trials[0].last_result["training_iteration"] == PROBE_ITERATIONS
    found = _probe_trial(probe.trial_info_path)
    assert found is not None and found[1] in range(4)
    records = probe.read_trial_info()
    assert [r["gpu_ids"] for r in records if r["event"] == "start"] == [[str(found[1])]]
    assert (probe.path / "tune").is_dir()
    assert not run_dir.trial_info_path.exists()  # the run's own file is left alone
