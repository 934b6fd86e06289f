"""Shared fixtures: one real local Ray for the whole session, and sweep and fit helpers.

The helpers themselves live in factories.py (importable by every test module); the
fixtures here hand the same functions to tests that prefer fixtures.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from raysweep.trainables.builtins import Reporter
    from raysweep.trainables.context import TrialContext
    from raysweep.trainables.data import Dataset

REPO = Path(__file__).resolve().parents[1]
TESTS = str(REPO / "tests")  # on sys.path (pyproject's pythonpath): `factories` imports
# in Ray's workers too, which import a test module's trainable and with it `factories`
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, (os.environ.get("PYTHONPATH"), TESTS)))

from factories import QUADRATIC_SPACES, quadratic_sweep, run_sweep_cli, sweep_in_process  # noqa: E402

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
# Every Ray the tests start (and the processes they start inherit this) binds and
# talks on 127.0.0.1 only: Ray's switch for single-machine clusters.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")


@pytest.fixture(scope="session")
def ray_session() -> Iterator[None]:
    """A real local Ray with 2 CPUs and 4 logical GPUs, shared by in-process tests."""
    import ray

    if not ray.is_initialized():
        ray.init(
            address="local",  # never join another Ray running on the machine
            num_cpus=2,
            num_gpus=4,
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
        )
    yield
    ray.shutdown()


def has_nvidia_gpu() -> bool:
    try:
        import pynvml

        pynvml.nvmlInit()
        count = pynvml.nvmlDeviceGetCount()
        pynvml.nvmlShutdown()
        return bool(count)
    except Exception:
        return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if has_nvidia_gpu():
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU (NVML found none)")
    for item in items:
        if item.get_closest_marker("gpu") is not None:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def quadratic_spaces() -> dict[str, dict[str, Any]]:
    """:data:`QUADRATIC_SPACES`: search algorithm -> space of ``examples.quadratic:fit``."""
    return QUADRATIC_SPACES


@pytest.fixture(params=sorted(QUADRATIC_SPACES))
def quadratic_algorithm(request: pytest.FixtureRequest) -> str:
    """Each search algorithm of :data:`QUADRATIC_SPACES` in turn."""
    return str(request.param)


@pytest.fixture(scope="session")
def small_sweep() -> Callable[..., dict[str, Any]]:
    """:func:`factories.quadratic_sweep`: builds a small sweep's sweep.json data."""
    return quadratic_sweep


def run_sweep_in_process(tmp_path: Path, data: dict[str, Any]) -> Path:
    """Run sweep.json ``data`` in this process (:func:`factories.sweep_in_process`); it must
    succeed. Returns its run directory."""
    code, run_dir, out = sweep_in_process(tmp_path, data)
    assert code == 0, out
    return run_dir.path


@pytest.fixture(scope="session")
def run_in_process() -> Callable[[Path, dict[str, Any]], Path]:
    """:func:`run_sweep_in_process`: runs sweep.json data in this process and its Ray."""
    return run_sweep_in_process


def count_max_overlap(intervals: list[tuple[float, float]]) -> int:
    """The most (start, end) intervals open at one moment."""
    points = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals])
    current = best = 0
    for _, step in points:
        current += step
        best = max(best, current)
    return best


@pytest.fixture(scope="session")
def max_overlap() -> Callable[[list[tuple[float, float]]], int]:
    """:func:`count_max_overlap`: how many trials ran at once, from their intervals."""
    return count_max_overlap


@pytest.fixture(scope="session")
def sweep_cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    """:func:`factories.run_sweep_cli`: the ``sweep`` command in a fresh process."""
    return run_sweep_cli


class StopFit(Exception):
    """Raised by a :class:`Recorder` to end a fit early, like a scheduler stopping a trial."""


class Recorder:
    """A plain-Python reporter: keeps metrics and copies of checkpoints."""

    def __init__(self, root: Path, stop_after: int | None = None) -> None:
        self.root, self.stop_after = root, stop_after
        self.metrics: list[dict[str, float]] = []
        self.checkpoints: dict[int, Path] = {}  # report number -> saved copy

    def __call__(self, metrics: dict[str, float], checkpoint_dir: Path | None) -> None:
        self.metrics.append(dict(metrics))
        if checkpoint_dir is not None:
            copy = self.root / f"ckpt-{len(self.metrics)}"
            shutil.copytree(checkpoint_dir, copy)
            self.checkpoints[len(self.metrics)] = copy
        if self.stop_after is not None and len(self.metrics) >= self.stop_after:
            raise StopFit


Fit = Callable[[dict[str, Any], "TrialContext", "Dataset", "Reporter", Path | None], None]
"""A built-in's ``fit(config, ctx, dataset, report, checkpoint_dir)``."""


def record_builtin_fit(
    fit: Fit,
    context: Callable[..., TrialContext],
    root: Path,
    config: dict[str, Any],
    args: dict[str, Any],
    *,
    resume: Path | None = None,
    stop_after: int | None = None,
    **context_options: Any,
) -> Recorder:
    """Fit ``config`` in this process, recording every report.

    The trial is ``context(args, **context_options)`` (``seed``, ``checkpoint_frequency``);
    the data set comes from ``args``, the trainable_args. Checkpoint copies go under
    ``root``; ``resume`` is a checkpoint to start from; ``stop_after`` reports end the fit.
    """
    from raysweep.trainables.data import load_dataset

    recorder = Recorder(root, stop_after)
    with contextlib.suppress(StopFit):
        fit(config, context(args, **context_options), load_dataset(args, 0), recorder, resume)
    return recorder


@pytest.fixture(scope="session")
def record_fit() -> Callable[..., Recorder]:
    """:func:`record_builtin_fit`: a built-in's fit in this process, its reports recorded."""
    return record_builtin_fit
