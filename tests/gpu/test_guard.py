"""The memory guard: torch's allocator capped at a trial's share of its GPU."""

from __future__ import annotations

import subprocess
import sys

import pytest

from raysweep.gpu.guard import GPU_MEMORY_HEADROOM, cap_torch_memory


def run_python(code: str) -> str:
    """``code`` in a fresh interpreter (a cap lasts as long as its process); its stdout."""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip()


@pytest.mark.parametrize("fraction", [0.0, 1.0, 2.0])
def test_whole_gpus_or_none_are_not_capped(fraction: float) -> None:
    assert cap_torch_memory(fraction) is None


def test_a_process_without_torch_is_left_alone() -> None:
    """No cap, and torch is not imported (a GBM trial gets no CUDA context from raysweep)."""
    out = run_python(
        "import sys; from raysweep.gpu.guard import cap_torch_memory; "
        "print(cap_torch_memory(0.25), 'torch' in sys.modules)"
    )
    assert out == "None False"


def test_without_cuda_nothing_is_capped() -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    assert cap_torch_memory(0.25) is None


@pytest.mark.gpu
def test_a_quarter_share_refuses_more_than_its_quarter() -> None:
    out = run_python(
        "import torch\n"
        "from raysweep.gpu.guard import cap_torch_memory\n"
        "print(cap_torch_memory(0.25))\n"
        "total = torch.cuda.get_device_properties(0).total_memory\n"
        "fits = torch.empty(int(total * 0.2), dtype=torch.uint8, device='cuda')\n"
        "try:\n"
        "    torch.empty(int(total * 0.1), dtype=torch.uint8, device='cuda')\n"
        "    print('allocated')\n"
        "except torch.OutOfMemoryError:\n"
        "    print('refused')\n"
    )
    assert out.splitlines() == [str(0.25 * GPU_MEMORY_HEADROOM), "refused"]
