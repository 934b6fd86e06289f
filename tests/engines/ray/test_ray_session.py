"""Starting and stopping Ray: raysweep stops only the Ray it started, and stops it whole."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from factories import REPO
from raysweep.engines.ray.ray_session import RayOptions, start_ray, stop_ray

STOP_SCRIPT = textwrap.dedent(
    """
    import json, time
    import ray
    from ray._private import worker
    from raysweep.engines.ray.ray_session import RayOptions, start_ray, stop_ray

    start_ray(RayOptions(num_cpus=1))
    pids = {kind: [i.process.pid for i in infos]
            for kind, infos in worker._global_node.all_processes.items()}
    started = time.monotonic()
    stop_ray()
    print(json.dumps({"pids": pids, "stop_s": time.monotonic() - started,
                      "initialized": ray.is_initialized()}))
    """
)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.usefixtures("ray_session")
def test_a_ray_found_running_is_left_running() -> None:
    import ray

    info = start_ray(RayOptions())
    assert info.resources["CPU"] == 2 and not info.started_here
    stop_ray()
    assert ray.is_initialized()


def test_the_ray_started_here_is_stopped_with_all_its_processes() -> None:
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["PYTHONPATH"] = str(REPO)
    done = subprocess.run(
        [sys.executable, "-c", STOP_SCRIPT],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["initialized"] is False
    assert "monitor" in report["pids"] and "raylet" in report["pids"]
    left = [(kind, pid) for kind, pids in report["pids"].items() for pid in pids if _alive(pid)]
    assert left == []
    print(f"stop_ray took {report['stop_s']:.2f} s")
