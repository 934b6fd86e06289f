"""GPU inventory through real NVML: its failure path here, its GPU path on a GPU box."""

from __future__ import annotations

import json

import pytest

from raysweep.gpu.inventory import (
    GPUInfo,
    Inventory,
    format_cuda_version,
    format_inventory,
    inventory_to_json,
    read_inventory,
)


def _fake_inventory() -> Inventory:
    gpus = (
        GPUInfo(0, "NVIDIA H100 80GB HBM3", "GPU-aaaa", 81559.0, 1024.0, 37.0, 41.0),
        GPUInfo(1, "NVIDIA H100 80GB HBM3", "GPU-bbbb", 81559.0, 0.0, None, None),
    )
    return Inventory(gpus, "550.54.15", "12.4", None)


def test_read_inventory_never_raises_and_is_consistent() -> None:
    inv = read_inventory()
    assert inv.available == bool(inv.gpus)
    if not inv.available:
        assert inv.gpus == ()
        assert inv.error is not None
        assert inv.error.startswith("no NVIDIA GPU found")
        assert "NVML" in inv.error


def test_no_gpu_machine_reports_why() -> None:
    inv = read_inventory()
    if inv.available:
        pytest.skip("this machine has an NVIDIA GPU")
    text = format_inventory(inv)
    assert text.startswith("no NVIDIA GPU found")
    data = inventory_to_json(inv)
    assert data["available"] is False
    assert data["gpus"] == []
    assert data["error"] == inv.error
    json.dumps(data)


def test_read_inventory_is_repeatable() -> None:
    first, second = read_inventory(), read_inventory()
    assert (first.indices, first.error) == (second.indices, second.error)


def test_format_inventory_table() -> None:
    text = format_inventory(_fake_inventory())
    lines = text.splitlines()
    assert lines[0].split()[:2] == ["GPU", "NAME"]
    assert "NVIDIA H100 80GB HBM3" in lines[1]
    assert "1,024 / 81,559 MiB" in lines[1]
    assert "37%" in lines[1] and "41 C" in lines[1]
    assert "n/a" in lines[2]
    assert lines[-1] == "driver 550.54.15, CUDA 12.4"


def test_inventory_to_json_round_trips() -> None:
    data = json.loads(json.dumps(inventory_to_json(_fake_inventory())))
    assert data["available"] is True
    assert data["cuda_version"] == "12.4"
    assert [g["index"] for g in data["gpus"]] == [0, 1]
    assert data["gpus"][0]["memory_total_mb"] == 81559.0
    assert data["gpus"][1]["utilization_pct"] is None


def test_available_needs_gpus_and_no_error() -> None:
    assert not Inventory((), "550", "12.4", None).available
    assert _fake_inventory().available
    assert _fake_inventory().indices == (0, 1)


@pytest.mark.parametrize(("raw", "text"), [(12040, "12.4"), (12020, "12.2"), (11080, "11.8")])
def test_format_cuda_version(raw: int, text: str) -> None:
    assert format_cuda_version(raw) == text


@pytest.mark.gpu
def test_gpu_inventory_lists_gpus() -> None:
    inv = read_inventory()
    assert inv.available, inv.error
    assert inv.error is None
    assert [g.index for g in inv.gpus] == list(range(len(inv.gpus)))
    for gpu in inv.gpus:
        assert gpu.name
        assert gpu.uuid.startswith(("GPU-", "MIG-"))
        assert gpu.memory_total_mb > 0
        assert 0 <= gpu.memory_used_mb <= gpu.memory_total_mb
    assert inv.driver_version
    assert inv.cuda_version and inv.cuda_version.count(".") == 1
    text = format_inventory(inv)
    assert inv.gpus[0].name in text
    assert f"driver {inv.driver_version}" in text
