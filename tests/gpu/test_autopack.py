"""gpus_per_trial "auto": the packing rule, the reading of a probe, NVML's real failure path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from raysweep.errors import GPUError
from raysweep.gpu.autopack import (
    MemorySampler,
    ProbeReading,
    choose_packing,
    describe,
    packing_record,
    read_torch_peak,
)
from raysweep.gpu.inventory import read_inventory

H100_MB = 81559.0


@pytest.mark.parametrize(
    ("peak", "memory", "headroom", "cap", "trials", "fraction"),
    [
        (1234, H100_MB, 0.2, 8, 8, 0.125),  # small model: the cap decides
        (1234, H100_MB, 0.2, 2, 2, 0.5),  # few CPU slots per GPU
        (20000, H100_MB, 0.2, 8, 3, 0.3333),  # 65247 usable // 20000; 1/3 rounded down
        (16000, 80000, 0.2, 8, 4, 0.25),  # exactly four peaks in 80% of the card
        (16001, 80000, 0.2, 8, 3, 0.3333),
        (16000, 80000, 0.0, 8, 5, 0.2),  # no headroom
        (40000, 80000, 0.2, 8, 1, 1.0),  # one fits, two do not
        (0, H100_MB, 0.2, 6, 6, 0.1666),  # no measurable memory: the cap
        (1000, 80000, 0.2, 1, 1, 1.0),
    ],
)
def test_choose_packing(
    peak: float, memory: float, headroom: float, cap: int, trials: int, fraction: float
) -> None:
    packing = choose_packing(peak, memory, headroom, cap)
    assert (packing.trials_per_gpu, packing.gpus_per_trial) == (trials, fraction)
    assert packing.warning is None
    assert packing.trials_per_gpu * packing.gpus_per_trial <= 1.0


def test_a_trial_that_does_not_fit_gets_a_whole_gpu_and_a_warning() -> None:
    packing = choose_packing(70000, H100_MB, 0.2, 8)
    assert (packing.trials_per_gpu, packing.gpus_per_trial) == (1, 1.0)
    assert packing.warning is not None
    assert "70000 MiB" in packing.warning and "20% headroom" in packing.warning


def test_default_headroom_is_20_percent_and_cap_8() -> None:
    assert choose_packing(100, H100_MB).trials_per_gpu == 8
    assert choose_packing(H100_MB * 0.8 / 2, H100_MB).trials_per_gpu == 2


@pytest.mark.parametrize(
    ("args", "match"),
    [((100, 0), "gpu_memory_mb"), ((100, 1000, 1.0), "headroom"), ((100, 1000, 0.2, 0), "cap")],
)
def test_choose_packing_rejects_nonsense(args: tuple[float, ...], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        choose_packing(*args)  # type: ignore[arg-type]


def reading(**kw: float | None) -> ProbeReading:
    base: dict[str, float | int | None] = {
        "gpu_index": 0,
        "pid": 123,
        "process_peak_mb": None,
        "device_peak_mb": None,
        "torch_peak_mb": None,
        "gpu_total_mb": H100_MB,
        "gpu_free_mb": 81000.0,
        "samples": 50,
    }
    base.update(kw)
    return ProbeReading(**base)  # type: ignore[arg-type]


def test_peak_prefers_the_process_figure_then_the_larger_fallback() -> None:
    assert reading(process_peak_mb=900, device_peak_mb=1500).peak() == (900, "nvml-process")
    assert reading(device_peak_mb=1500, torch_peak_mb=700).peak() == (1500, "nvml-device")
    assert reading(device_peak_mb=200, torch_peak_mb=700).peak() == (700, "torch")
    assert reading().peak() == (0.0, "nvml-device")


def test_record_and_log_line() -> None:
    probe = reading(process_peak_mb=1234.0, device_peak_mb=1300.0, torch_peak_mb=700.0)
    packing = choose_packing(1234.0, probe.gpu_free_mb, 0.2, 8)
    record = packing_record(probe, packing, 0.2, 8)
    assert record["gpus_per_trial"] == 0.125 and record["trials_per_gpu"] == 8
    assert record["probe_peak_mb"] == 1234.0 and record["method"] == "nvml-process"
    assert record["gpu_total_mb"] == H100_MB and record["headroom"] == 0.2
    assert record["measured"] == {
        "nvml_process_mb": 1234.0,
        "nvml_device_mb": 1300.0,
        "torch_mb": 700.0,
        "samples": 50,
    }
    assert record["warnings"] == []
    assert json.loads(json.dumps(record)) == record
    assert describe(record) == (
        "gpus_per_trial auto: probe peak 1234 MiB (nvml-process) of 81000 MiB free -> "
        "8 trials per GPU (0.125 GPU each, 20% headroom, at most 8)"
    )


def test_read_torch_peak(tmp_path: Path) -> None:
    path = tmp_path / "torch_peak.json"
    assert read_torch_peak(None) is None and read_torch_peak(path) is None
    path.write_text('{"pid": 1, "torch_peak_mb": 512.5}')
    assert read_torch_peak(path) == 512.5
    path.write_text("{torn")
    assert read_torch_peak(path) is None


@pytest.mark.skipif(read_inventory().available, reason="this machine has an NVIDIA GPU")
def test_sampler_without_gpu_fails_with_nvmls_reason() -> None:
    with pytest.raises(GPUError) as info, MemorySampler([0], lambda: None):
        pass
    message = str(info.value)
    assert message.startswith("resources.gpus_per_trial=auto: no NVIDIA GPU found (NVML: ")


def test_sampler_needs_a_gpu() -> None:
    with pytest.raises(ValueError, match="at least one GPU"):
        MemorySampler([], lambda: None)
