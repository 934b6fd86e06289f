"""--gpus parsing, GPU planning against fake and real inventories, and id mapping."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from raysweep.errors import ConfigError, GPUError
from raysweep.gpu.allocation import (
    GPUPlan,
    GPUSelection,
    cuda_visible_devices,
    gpu_env,
    gpus_per_trial_warnings,
    parse_gpus_flag,
    physical_gpu_ids,
    resolve_gpus,
    validate_gpus_per_trial,
)
from raysweep.gpu.inventory import GPUInfo, Inventory, read_inventory

NO_GPUS = Inventory((), None, None, "no NVIDIA GPU found (NVML: Driver Not Loaded)")


def _box(n: int, used_mb: float = 500.0) -> Inventory:
    gpus = tuple(
        GPUInfo(i, "NVIDIA A100-SXM4-80GB", f"GPU-{i:04d}", 81920.0, used_mb, 0.0, 30.0)
        for i in range(n)
    )
    return Inventory(gpus, "550.54.15", "12.4", None)


# -- parse_gpus_flag ---------------------------------------------------------
@pytest.mark.parametrize(
    ("flag", "expected"),
    [
        (None, GPUSelection("unset")),
        ("none", GPUSelection("none")),
        ("all", GPUSelection("all")),
        ("ALL", GPUSelection("all")),
        ("0", GPUSelection("ids", (0,))),
        ("0,1,3", GPUSelection("ids", (0, 1, 3))),
        (" 3, 1 ", GPUSelection("ids", (3, 1))),
    ],
)
def test_parse_gpus_flag(flag: str | None, expected: GPUSelection) -> None:
    assert parse_gpus_flag(flag) == expected


@pytest.mark.parametrize(
    ("flag", "named"),
    [("a", "'a'"), ("-1", "'-1'"), ("0,0", "GPU 0"), ("0,,1", "''"), ("1.5", "'1.5'"), ("", "")],
)
def test_parse_gpus_flag_rejects(flag: str, named: str) -> None:
    with pytest.raises(ConfigError, match="--gpus") as err:
        parse_gpus_flag(flag)
    assert named in str(err.value)
    assert err.value.exit_code == 2


# -- validate_gpus_per_trial ---------------------------------------------------
@pytest.mark.parametrize("value", [0, 0.25, 0.5, 1 / 3, 1, 1.0, 2, 8])
def test_valid_gpus_per_trial(value: float) -> None:
    validate_gpus_per_trial(value)


def test_gpus_per_trial_must_be_fraction_or_whole() -> None:
    with pytest.raises(ConfigError) as err:
        validate_gpus_per_trial(1.5)
    assert str(err.value) == (
        "gpus_per_trial must be a fraction in (0, 1] or a whole number (got 1.5)"
    )


@pytest.mark.parametrize("value", [-1, float("nan"), float("inf"), 0.00001])
def test_gpus_per_trial_rejects_nonsense(value: float) -> None:
    with pytest.raises(ConfigError, match="gpus_per_trial"):
        validate_gpus_per_trial(value)


def test_uneven_fraction_warns() -> None:
    assert gpus_per_trial_warnings(0.25) == ()
    assert gpus_per_trial_warnings(1) == ()
    (warning,) = gpus_per_trial_warnings(0.3)
    assert "packs 3" in warning and "10%" in warning


# -- resolve_gpus on a (described) multi-GPU box -----------------------------------
def test_explicit_ids() -> None:
    plan = resolve_gpus(parse_gpus_flag("0,1,3"), _box(4), 0.25, allow_cpu=False)
    assert plan == GPUPlan((0, 1, 3), 3, False, ())
    assert cuda_visible_devices(plan) == "0,1,3"
    assert gpu_env(plan) == {"CUDA_DEVICE_ORDER": "PCI_BUS_ID", "CUDA_VISIBLE_DEVICES": "0,1,3"}


def test_missing_id_names_it_and_lists_existing() -> None:
    with pytest.raises(GPUError) as err:
        resolve_gpus(parse_gpus_flag("0,7"), _box(2), 1, allow_cpu=False)
    msg = str(err.value)
    assert "GPU 7 does not exist" in msg
    assert "0 (NVIDIA A100-SXM4-80GB), 1 (NVIDIA A100-SXM4-80GB)" in msg
    assert err.value.exit_code == 2


def test_all_and_unset() -> None:
    box = _box(4)
    assert resolve_gpus(parse_gpus_flag("all"), box, 1, False).physical_ids == (0, 1, 2, 3)
    assert resolve_gpus(parse_gpus_flag(None), box, 0.5, False).physical_ids == (0, 1, 2, 3)
    cpu_only = resolve_gpus(parse_gpus_flag(None), box, 0, False)
    assert cpu_only == GPUPlan((), 0, False, ())
    assert cuda_visible_devices(cpu_only) == ""


def test_none_selects_nothing() -> None:
    plan = resolve_gpus(parse_gpus_flag("none"), _box(2), 0, allow_cpu=False)
    assert plan == GPUPlan((), 0, False, ())
    with pytest.raises(GPUError, match="--gpus none selects no GPU; use --allow-cpu"):
        resolve_gpus(parse_gpus_flag("none"), _box(2), 0.5, allow_cpu=False)
    fallback = resolve_gpus(parse_gpus_flag("none"), _box(2), 0.5, allow_cpu=True)
    assert fallback.cpu_fallback and fallback.num_gpus == 0


def test_whole_gpu_request_larger_than_selection() -> None:
    with pytest.raises(GPUError, match=r"asks for 2 GPUs per trial but only 1 GPU\(s\)"):
        resolve_gpus(parse_gpus_flag("1"), _box(4), 2, allow_cpu=False)
    plan = resolve_gpus(parse_gpus_flag("0,1,2"), _box(4), 2, allow_cpu=False)
    assert plan.num_gpus == 3
    assert any("1 GPU(s) will stay idle" in w for w in plan.warnings)


def test_warnings_for_busy_gpu_and_unused_selection() -> None:
    busy = resolve_gpus(parse_gpus_flag("0"), _box(1, used_mb=40000.0), 1, False)
    assert any("GPU 0 already has 40,000" in w for w in busy.warnings)
    unused = resolve_gpus(parse_gpus_flag("0"), _box(1), 0, False)
    assert any("0 GPUs per trial" in w for w in unused.warnings)


def test_resolve_validates_gpus_per_trial() -> None:
    with pytest.raises(ConfigError, match=r"got 1\.5"):
        resolve_gpus(parse_gpus_flag("all"), _box(2), 1.5, allow_cpu=False)


# -- resolve_gpus without GPUs ---------------------------------------------------
def test_gpus_asked_without_gpus_is_an_error() -> None:
    with pytest.raises(GPUError) as err:
        resolve_gpus(parse_gpus_flag(None), NO_GPUS, 0.25, allow_cpu=False)
    msg = str(err.value)
    assert msg.startswith("this config asks for 0.25 GPU per trial but no NVIDIA GPU was found")
    assert msg.endswith("; use --allow-cpu to run on CPUs")
    assert "Driver Not Loaded" in msg


def test_allow_cpu_falls_back_with_a_warning() -> None:
    plan = resolve_gpus(parse_gpus_flag("all"), NO_GPUS, 0.25, allow_cpu=True)
    assert plan.physical_ids == () and plan.num_gpus == 0 and plan.cpu_fallback
    assert len(plan.warnings) == 1 and "run on CPUs only" in plan.warnings[0]
    assert cuda_visible_devices(plan) == ""


def test_auto_without_gpus_names_the_field() -> None:
    with pytest.raises(GPUError) as err:
        resolve_gpus(parse_gpus_flag(None), NO_GPUS, "auto", allow_cpu=False)
    msg = str(err.value)
    assert msg.startswith(
        "this config asks for GPUs (resources.gpus_per_trial=auto) but no NVIDIA GPU was found"
    )
    assert msg.endswith("; use --allow-cpu to run on CPUs")
    with pytest.raises(GPUError, match=r"gpus_per_trial=auto\) but --gpus none selects no GPU"):
        resolve_gpus(parse_gpus_flag("none"), _box(2), "auto", allow_cpu=False)
    plan = resolve_gpus(parse_gpus_flag(None), NO_GPUS, "auto", allow_cpu=True)
    assert plan.cpu_fallback and plan.num_gpus == 0
    assert "resources.gpus_per_trial=auto" in plan.warnings[0]


def test_auto_plans_every_selected_gpu_without_fraction_warnings() -> None:
    plan = resolve_gpus(parse_gpus_flag(None), _box(3), "auto", allow_cpu=False)
    assert plan == GPUPlan((0, 1, 2), 3, False, ())
    plan = resolve_gpus(parse_gpus_flag("1"), _box(3), "auto", allow_cpu=False)
    assert plan.physical_ids == (1,)


def test_all_without_gpus_and_cpu_config_is_fine() -> None:
    plan = resolve_gpus(parse_gpus_flag("all"), NO_GPUS, 0, allow_cpu=False)
    assert plan == GPUPlan((), 0, False, ())


def test_against_the_real_inventory() -> None:
    inv = read_inventory()
    if inv.available:
        pytest.skip("this machine has an NVIDIA GPU")
    with pytest.raises(GPUError, match="GPU 7 requested but no NVIDIA GPU found"):
        resolve_gpus(parse_gpus_flag("7"), inv, 1, allow_cpu=False)
    with pytest.raises(GPUError, match="GPU 7 requested"):
        resolve_gpus(parse_gpus_flag("7"), inv, 0.5, allow_cpu=True)
    with pytest.raises(GPUError, match="use --allow-cpu"):
        resolve_gpus(parse_gpus_flag(None), inv, 1, allow_cpu=False)
    assert resolve_gpus(parse_gpus_flag(None), inv, 1, allow_cpu=True).cpu_fallback
    assert resolve_gpus(parse_gpus_flag(None), inv, 0, allow_cpu=False).num_gpus == 0


# -- physical_gpu_ids -------------------------------------------------------------
def test_physical_ids_when_ray_translated() -> None:
    # The driver exported CUDA_VISIBLE_DEVICES=1,3: Ray hands out its entries as strings.
    assert physical_gpu_ids(["3"], "1,3") == ("3",)
    assert physical_gpu_ids(["3", "1"], "1,3") == ("1", "3")


def test_physical_ids_from_slots() -> None:
    # Int ids are Ray slots: an index into the driver's CUDA_VISIBLE_DEVICES.
    assert physical_gpu_ids([1], "1,3") == ("3",)
    assert physical_gpu_ids([0, 1], "2, 5") == ("2", "5")
    # Without CUDA_VISIBLE_DEVICES, slots are the physical ids.
    assert physical_gpu_ids([2, 0], None) == ("0", "2")
    assert physical_gpu_ids([10, 2], None) == ("2", "10")
    assert physical_gpu_ids([], "0,1") == ()


def test_physical_ids_keep_uuids() -> None:
    assert physical_gpu_ids(["GPU-abc"], "GPU-abc,GPU-def") == ("GPU-abc",)
    assert physical_gpu_ids([1], "GPU-abc,GPU-def") == ("GPU-def",)


def test_physical_ids_slot_outside_visible() -> None:
    with pytest.raises(ValueError, match="slot 2"):
        physical_gpu_ids([2], "0,1")
    with pytest.raises(ValueError, match="slot 0"):
        physical_gpu_ids([0], "")


# -- physical_gpu_ids against a real Ray ---------------------------------------------
def test_physical_ids_in_a_real_ray_task(ray_session: None) -> None:
    import ray

    @ray.remote(num_gpus=1, num_cpus=0)
    def assigned() -> tuple[list[int] | list[str], str | None]:
        return ray.get_gpu_ids(), os.environ.get("CUDA_VISIBLE_DEVICES")

    ids, task_visible = ray.get(assigned.remote())
    physical = physical_gpu_ids(ids, os.environ.get("CUDA_VISIBLE_DEVICES"))
    assert len(physical) == 1
    assert task_visible == physical[0]


_RAY_SCRIPT = """
import json, os, ray
ray.init(num_cpus=1, num_gpus=2, include_dashboard=False, log_to_driver=False,
         configure_logging=False)

@ray.remote(num_gpus=1, num_cpus=0)
def assigned():
    return ray.get_gpu_ids(), os.environ.get("CUDA_VISIBLE_DEVICES")

print("RESULT " + json.dumps(ray.get([assigned.remote() for _ in range(4)])))
ray.shutdown()
"""


@pytest.mark.slow
def test_physical_ids_with_driver_cuda_visible_devices() -> None:
    """With CUDA_VISIBLE_DEVICES=1,3 at Ray start, trials get physical ids 1 and 3."""
    plan = GPUPlan((1, 3), 2, False, ())
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", **gpu_env(plan)}
    env.pop("RAY_ADDRESS", None)
    proc = subprocess.run(
        [sys.executable, "-c", _RAY_SCRIPT],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT "))
    for ids, task_visible in json.loads(line.removeprefix("RESULT ")):
        physical = physical_gpu_ids(ids, cuda_visible_devices(plan))
        assert physical in {("1",), ("3",)}
        assert task_visible == physical[0]
