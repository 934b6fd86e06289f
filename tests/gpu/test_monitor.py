"""ResourceMonitor with real psutil and real NVML (its failure path here)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from raysweep.gpu.inventory import read_inventory
from raysweep.gpu.monitor import ResourceMonitor
from raysweep.gpu.usage import downsample, format_usage_summary, summarize_usage
from raysweep.jsonio import read_json

SUMMARY_KEYS = {
    "samples",
    "duration_s",
    "cpu_pct_mean",
    "cpu_pct_peak",
    "ram_used_mb_peak",
    "ram_total_mb",
    "gpus",
}


def _sample(t: float, cpu: float, ram: float, util: float, mem: float) -> dict[str, Any]:
    gpu = {"index": 0, "util_pct": util, "mem_used_mb": mem, "mem_total_mb": 1000.0}
    return {
        "t": t,
        "cpu_pct": cpu,
        "ram_used_mb": ram,
        "ram_total_mb": 8000.0,
        "gpus": [gpu],
    }


def test_monitor_writes_samples_and_stops_promptly(tmp_path: Path) -> None:
    path = tmp_path / "run" / "resource_usage.json"
    with ResourceMonitor(path, interval_s=0.2, gpu_ids=(0, 1)) as mon:
        time.sleep(1.0)
        stop_at = time.monotonic()
    assert time.monotonic() - stop_at < 1.0
    assert mon._thread is not None and not mon._thread.is_alive()

    data = read_json(path)
    assert data["interval_s"] == 0.2
    assert len(data["samples"]) >= 2
    first = data["samples"][0]
    assert abs(first["t"] - time.time()) < 60
    assert 0 <= first["cpu_pct"] <= 100
    assert 0 < first["ram_used_mb"] <= first["ram_total_mb"]
    assert [s["t"] for s in data["samples"]] == sorted(s["t"] for s in data["samples"])
    assert set(data["summary"]) >= SUMMARY_KEYS
    assert data["summary"]["samples"] == len(data["samples"])
    assert data["summary"]["ram_used_mb_peak"] > 0
    if not read_inventory().available:
        assert all(s["gpus"] == [] for s in data["samples"])
        assert data["gpu_error"].startswith("no NVIDIA GPU found")
        assert "GPUs   not sampled (no NVIDIA GPU found" in format_usage_summary(data["summary"])
    assert not list(path.parent.glob(".*.tmp"))


def test_monitor_flushes_while_running(tmp_path: Path) -> None:
    path = tmp_path / "resource_usage.json"
    mon = ResourceMonitor(path, interval_s=0.05, gpu_ids=(), flush_every_s=0.1).start()
    try:
        deadline = time.monotonic() + 5
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert path.exists(), "no periodic flush before stop"
        assert json.loads(path.read_text())["samples"]
    finally:
        mon.stop()
    assert mon.summary()["gpus"] == []
    mon.stop()  # idempotent


def test_monitor_bounds_memory_and_file(tmp_path: Path) -> None:
    path = tmp_path / "resource_usage.json"
    with ResourceMonitor(path, interval_s=0.01, gpu_ids=(), max_samples=16) as mon:
        deadline = time.monotonic() + 10
        while mon.summary()["samples"] < 100 and time.monotonic() < deadline:
            time.sleep(0.02)
    data = read_json(path)
    assert data["summary"]["samples"] >= 100
    assert len(data["samples"]) < 16
    assert data["downsampled"] is True
    weights = [s.get("n", 1) for s in data["samples"]]
    assert sum(weights) == data["summary"]["samples"]
    assert weights[0] > 1 and weights[-1] == 1
    times = [s["t"] for s in data["samples"]]
    assert times == sorted(times)


def test_monitor_rejects_bad_settings(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="interval_s"):
        ResourceMonitor(tmp_path / "r.json", interval_s=0)
    with pytest.raises(ValueError, match="max_samples"):
        ResourceMonitor(tmp_path / "r.json", max_samples=2)


def test_summarize_usage() -> None:
    samples = [
        _sample(100.0, 10.0, 1000.0, 50.0, 200.0),
        _sample(102.0, 30.0, 3000.0, 100.0, 600.0),
        _sample(104.0, 20.0, 2000.0, 0.0, 400.0),
    ]
    summary = summarize_usage(samples)
    assert summary == {
        "samples": 3,
        "duration_s": 4.0,
        "cpu_pct_mean": 20.0,
        "cpu_pct_peak": 30.0,
        "ram_used_mb_peak": 3000.0,
        "ram_total_mb": 8000.0,
        "gpus": [
            {
                "index": 0,
                "util_pct_mean": 50.0,
                "util_pct_peak": 100.0,
                "mem_used_mb_peak": 600.0,
                "mem_total_mb": 1000.0,
            }
        ],
    }
    text = format_usage_summary(summary)
    assert "3 samples over 0m 04s" in text
    assert "CPU    mean 20.0%, peak 30.0%" in text
    assert "RAM    peak 2.9 GiB of 7.8 GiB" in text
    assert "GPU 0  util mean 50.0%, peak 100.0%; memory peak 600 MiB of 1000 MiB" in text


def test_summarize_empty_and_missing_values() -> None:
    empty = summarize_usage([])
    assert empty["samples"] == 0 and empty["cpu_pct_mean"] is None and empty["gpus"] == []
    assert format_usage_summary(empty) == "Resource usage: no samples recorded"
    gaps = summarize_usage([{"t": 1.0, "cpu_pct": None, "ram_used_mb": None, "gpus": []}])
    assert gaps["samples"] == 1 and gaps["cpu_pct_peak"] is None
    assert "n/a" in format_usage_summary(gaps)


def test_downsample_keeps_means_and_peaks() -> None:
    samples = [_sample(float(t), float(t), 100.0 + t, float(10 * t), float(t)) for t in range(8)]
    small = downsample(samples)
    assert len(small) == 6
    assert small[0]["n"] == 2 and small[0]["t"] == 0.5 and small[0]["cpu_pct"] == 0.5
    assert small[0]["ram_used_mb"] == 101.0
    assert small[0]["gpus"][0] == {
        "index": 0,
        "util_pct": 5.0,
        "mem_used_mb": 1.0,
        "mem_total_mb": 1000.0,
    }
    assert small[2:] == samples[4:]
    before, after = summarize_usage(samples), summarize_usage(small)
    assert after["samples"] == before["samples"]
    assert after["cpu_pct_mean"] == before["cpu_pct_mean"]
    assert after["ram_used_mb_peak"] == before["ram_used_mb_peak"]
    assert after["gpus"][0]["mem_used_mb_peak"] == before["gpus"][0]["mem_used_mb_peak"]
    assert after["gpus"][0]["util_pct_mean"] == before["gpus"][0]["util_pct_mean"]
    again = downsample(small)
    assert sum(s.get("n", 1) for s in again) == 8


@pytest.mark.gpu
def test_monitor_records_gpu_samples(tmp_path: Path) -> None:
    inv = read_inventory()
    path = tmp_path / "resource_usage.json"
    with ResourceMonitor(path, interval_s=0.2, gpu_ids=inv.indices):
        time.sleep(1.0)
    data = read_json(path)
    assert data["gpu_error"] is None
    assert len(data["samples"]) >= 2
    for sample in data["samples"]:
        assert [g["index"] for g in sample["gpus"]] == list(inv.indices)
        for gpu in sample["gpus"]:
            assert gpu["mem_total_mb"] > 0
            assert 0 <= gpu["mem_used_mb"] <= gpu["mem_total_mb"]
            assert gpu["util_pct"] is None or 0 <= gpu["util_pct"] <= 100
    gpus = data["summary"]["gpus"]
    assert [g["index"] for g in gpus] == list(inv.indices)
    assert all(g["mem_used_mb_peak"] is not None for g in gpus)
    assert "GPU 0" in format_usage_summary(data["summary"])


def _wait_for_samples(mon: ResourceMonitor, count: int) -> None:
    deadline = time.monotonic() + 10
    while mon.summary()["samples"] < count and time.monotonic() < deadline:
        time.sleep(0.02)


def test_a_resumed_run_appends_to_resource_usage(tmp_path: Path) -> None:
    path = tmp_path / "resource_usage.json"
    with ResourceMonitor(path, interval_s=0.05, gpu_ids=()) as first:
        _wait_for_samples(first, 3)
    before = read_json(path)
    time.sleep(0.5)  # the run was down between its invocations
    with ResourceMonitor(path, interval_s=0.05, gpu_ids=()) as second:
        _wait_for_samples(second, len(before["samples"]) + 3)
    data = read_json(path)
    assert data["samples"][: len(before["samples"])] == before["samples"]
    assert len(data["samples"]) > len(before["samples"])
    assert data["summary"]["samples"] == len(data["samples"])
    assert data["started_at"] == before["started_at"]
    earlier, this = data["invocations"]
    assert earlier["samples"] == len(before["samples"])
    assert earlier["samples"] + this["samples"] == len(data["samples"])
    assert earlier["last_t"] < this["first_t"]
    spans = (earlier["last_t"] - earlier["first_t"]) + (this["last_t"] - this["first_t"])
    assert data["summary"]["duration_s"] == round(spans, 1)
    assert data["summary"]["invocations"] == 2


def test_appending_keeps_an_earlier_files_exact_peaks(tmp_path: Path) -> None:
    path = tmp_path / "resource_usage.json"
    merged = [
        {**_sample(100.0, 40.0, 1000.0, 50.0, 300.0), "n": 4},  # window means of 4 samples
        _sample(101.0, 20.0, 900.0, 10.0, 200.0),
    ]
    summary = summarize_usage(merged)
    summary.update(cpu_pct_peak=99.0, samples=5)  # the exact peak, over the raw samples
    summary["gpus"][0]["util_pct_peak"] = 97.0
    # a file as written before invocations were recorded
    path.write_text(json.dumps({"started_at": 99.0, "samples": merged, "summary": summary}))
    with ResourceMonitor(path, interval_s=0.05, gpu_ids=()) as mon:
        _wait_for_samples(mon, 7)
    data = read_json(path)
    assert data["samples"][:2] == merged and data["started_at"] == 99.0
    new_peak = max(s["cpu_pct"] for s in data["samples"][2:])  # raw samples of this invocation
    assert data["summary"]["cpu_pct_peak"] == max(99.0, new_peak)
    assert data["summary"]["gpus"][0]["util_pct_peak"] == 97.0
    assert data["invocations"][0]["samples"] == 2 and data["invocations"][0]["first_t"] == 100.0
    assert len(data["invocations"]) == 2


def test_an_unreadable_usage_file_is_started_anew(tmp_path: Path) -> None:
    path = tmp_path / "resource_usage.json"
    path.write_text("{torn")
    with ResourceMonitor(path, interval_s=0.05, gpu_ids=()) as mon:
        _wait_for_samples(mon, 2)
    data = read_json(path)
    assert len(data["invocations"]) == 1 and data["summary"]["samples"] == len(data["samples"])
