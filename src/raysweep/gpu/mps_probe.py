"""Can a CUDA client use the sweep's MPS daemon? One context on one GPU, in a child process.

A daemon that starts is not yet one that serves: in some sandboxes (gVisor's GPU
proxy, containers without the MPS sockets' permissions) ``nvidia-cuda-mps-control -d``
runs but every client fails to create its context, which would fail every trial.
The probe creates and releases the primary context of one GPU through the CUDA
driver API (``libcuda``, by ctypes: no torch, well under a second) with the sweep's
pipe directory, in a child process so the driver never holds a context itself.

``python -m raysweep.gpu.mps_probe`` exits 0 when it worked, else 1 with the CUDA
error on stderr.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys

from raysweep.gpu.mps import PIPE_ENV

_TIMEOUT_S = 60.0


def probe_client(pipe_dir: str, physical_id: int) -> str | None:
    """None when a client on GPU ``physical_id`` could create a context, else why not."""
    env = {
        **os.environ,
        PIPE_ENV: pipe_dir,
        "CUDA_VISIBLE_DEVICES": str(physical_id),
        "CUDA_DEVICE_ORDER": "PCI_BUS_ID",
    }
    try:
        done = subprocess.run(
            [sys.executable, "-m", "raysweep.gpu.mps_probe"],
            env=env,
            capture_output=True,
            text=True,
            timeout=_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        return f"a CUDA client did not get a context within {_TIMEOUT_S:.0f} s"
    if done.returncode == 0:
        return None
    lines = (done.stderr or done.stdout).strip().splitlines()
    return lines[-1] if lines else f"the client probe exited {done.returncode}"


def _check(cuda: ctypes.CDLL, result: int, call: str) -> None:
    if result == 0:
        return
    text = ctypes.c_char_p()
    cuda.cuGetErrorString(result, ctypes.byref(text))
    raise RuntimeError(f"{call} failed: {(text.value or b'').decode() or result}")


def main() -> int:
    """Create and release device 0's primary context (the child's side of :func:`probe_client`)."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
        _check(cuda, cuda.cuInit(0), "cuInit")
        device = ctypes.c_int()
        _check(cuda, cuda.cuDeviceGet(ctypes.byref(device), 0), "cuDeviceGet")
        context = ctypes.c_void_p()
        _check(cuda, cuda.cuDevicePrimaryCtxRetain(ctypes.byref(context), device),
               "cuDevicePrimaryCtxRetain")  # fmt: skip
        _check(cuda, cuda.cuDevicePrimaryCtxRelease(device), "cuDevicePrimaryCtxRelease")
    except (OSError, RuntimeError) as exc:
        print(f"CUDA client under MPS: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
