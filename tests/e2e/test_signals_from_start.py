"""SIGTERM at any moment of `sweep run` ends it as `interrupted` (exit 130), resumable.

systemd and nightly jobs send SIGTERM; it used to meet the handler ``ray.init``
installs while Ray was starting (about 5 s in) and end the run as ``failed``
with exit 15. A real process, a real signal, then a real resume.

The signalled runs go one at a time with nothing else running, so each signal
lands where its delay says; their resumes are not timed and run all at once
afterwards (each local Ray's dashboard finds a free port of its own).
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from e2e_helpers import Sweeps

from factories import quadratic_sweep
from raysweep.rundir import RunDir

pytestmark = pytest.mark.slow
AFTER_S = (1, 3, 5, 8)

CONFIG = quadratic_sweep(
    name="sigterm",
    space={"x": {"type": "uniform", "low": -5, "high": 5}, "steps": 4, "sleep_s": 0.4},
    search={"algorithm": "random", "num_samples": 3, "max_concurrent": 1},
    seed=5,
)


@dataclass
class Interrupted:
    """One signalled run and its resume."""

    run: RunDir
    ended_early: str | None = None  # the output of a run that ended before the signal
    code: int | None = None
    output: str = ""
    state: dict[str, Any] = field(default_factory=dict)  # state.json before the resume
    resume_code: int | None = None
    resume_output: str = ""


def finish(sweeps: Sweeps, proc: subprocess.Popen[str], timeout: float) -> tuple[int | None, str]:
    """Exit code and output; (None, what happened) when it outlived ``timeout`` (killed)."""
    try:
        return sweeps.wait(proc, timeout)
    except subprocess.TimeoutExpired:
        return None, f"still running after {timeout} s (killed): {sweeps.output(proc)}"


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[float, Interrupted]]:
    """Each delay of :data:`AFTER_S`: a run SIGTERMed that long after its start, resumed."""
    root = tmp_path_factory.mktemp("sigterm")
    sweeps = Sweeps(root)
    cases: dict[float, Interrupted] = {}
    try:
        for after_s in AFTER_S:
            tmp = root / f"after-{after_s}"
            tmp.mkdir()
            config = tmp / "sweep.json"
            config.write_text(json.dumps(CONFIG))
            case = cases[after_s] = Interrupted(RunDir(tmp / "runs" / "sigterm"))
            proc = sweeps.start("run", "--config", str(config), "--storage", str(tmp / "runs"))
            time.sleep(after_s)
            if proc.poll() is not None:
                case.ended_early = sweeps.output(proc)
                continue
            proc.send_signal(signal.SIGTERM)
            case.code, case.output = finish(sweeps, proc, 90)
            case.state = case.run.read_state()
        resumable = [c for c in cases.values() if c.code == 130]
        resumes = [sweeps.start("resume", str(c.run.path)) for c in resumable]
        for case, resume in zip(resumable, resumes, strict=True):
            case.resume_code, case.resume_output = finish(sweeps, resume, 240)
        yield cases
    finally:
        sweeps.close()


@pytest.mark.parametrize("after_s", AFTER_S)
def test_sigterm_at_any_moment_is_an_interruption_that_resumes(
    interrupted: dict[float, Interrupted], after_s: float
) -> None:
    case = interrupted[after_s]
    if case.ended_early is not None:
        pytest.fail(f"sweep ended before the signal: {case.ended_early}")
    output, run = case.output, case.run
    assert case.code == 130, output
    state = case.state
    assert state["status"] == "interrupted" and state["signal"] == "SIGTERM", output
    assert "sweep resume" in output

    assert case.resume_code == 0, case.resume_output
    result = run.read_results()
    assert len(result.trials) == 3
    assert sorted(t.index for t in result.trials) == [0, 1, 2]
    assert all(t.status == "completed" for t in result.trials)
    assert run.read_state()["status"] == "completed"
