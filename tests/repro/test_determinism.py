"""torch determinism switches and the flags recorded in the manifest."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from raysweep.repro.determinism import DETERMINISM_ENV, determinism_flags, set_deterministic


@pytest.fixture
def torch_state(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Restore torch's global switches (and the env) after the test."""
    import torch

    for key in DETERMINISM_ENV:
        monkeypatch.delenv(key, raising=False)
    saved = (
        torch.are_deterministic_algorithms_enabled(),
        torch.backends.cudnn.deterministic,
        torch.backends.cudnn.benchmark,
        torch.get_num_threads(),
    )
    yield
    torch.use_deterministic_algorithms(saved[0])
    torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = saved[1], saved[2]
    torch.set_num_threads(saved[3])


def test_set_deterministic_on_and_off(torch_state: None) -> None:
    import torch

    torch.backends.cudnn.benchmark = True
    set_deterministic(True, threads=1)
    assert torch.are_deterministic_algorithms_enabled()
    assert not torch.is_deterministic_algorithms_warn_only_enabled()
    assert torch.backends.cudnn.deterministic and not torch.backends.cudnn.benchmark
    assert torch.get_num_threads() == 1
    assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"
    flags = determinism_flags(True)
    assert flags["env"] == DETERMINISM_ENV and flags["torch.use_deterministic_algorithms"]
    assert flags["torch_state"] == {"deterministic_algorithms": True, "cudnn_deterministic": True,
                                    "cudnn_benchmark": False, "num_threads": 1}  # fmt: skip

    set_deterministic(False, threads=2)
    assert not torch.are_deterministic_algorithms_enabled()
    assert not torch.backends.cudnn.deterministic and torch.get_num_threads() == 2
    off = determinism_flags(False)
    assert off["env"] == {} and off["deterministic"] is False
    assert off["torch_state"]["deterministic_algorithms"] is False


def test_bad_thread_count(torch_state: None) -> None:
    with pytest.raises(ValueError, match="threads must be >= 1"):
        set_deterministic(True, threads=0)


def test_switching_off_a_torch_already_off_imports_no_compiler() -> None:
    """A fresh worker's non-deterministic trial does not pay for torch._inductor (~1.5 s)."""
    code = (
        "import sys, torch\n"
        "from raysweep.repro.determinism import set_deterministic\n"
        "set_deterministic(False, threads=1)\n"
        "assert 'torch._inductor' not in sys.modules, 'imported for nothing'\n"
        "set_deterministic(True)\n"
        "assert torch.are_deterministic_algorithms_enabled()\n"
        "import torch._inductor.config as c\n"
        "assert c.deterministic\n"
        "set_deterministic(False)\n"
        "assert not torch.are_deterministic_algorithms_enabled() and not c.deterministic\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
