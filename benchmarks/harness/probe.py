"""``sweep`` with timings: the console script's own ``main``, plus clocks around its stages.

    python -m benchmarks.harness.probe --timings t.json run --config sweep.json ...

Same process, same code path as the ``sweep`` console script (which is
``raysweep.cli:console``); it only wraps ``ray.init`` and ``ray.tune.Tuner.fit`` to
time them (importing Ray Tune up front, after raysweep's Ray env defaults, as
raysweep does) and records the driver's peak RSS at exit.
"""

from __future__ import annotations

import time

STARTED = time.time()

import atexit  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

_timings: dict[str, Any] = {"started": STARTED}


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _timed(name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        _timings[f"{name}_start"] = time.time()
        cpu = _cpu_s()
        try:
            return func(*args, **kwargs)
        finally:
            _timings[f"{name}_end"] = time.time()
            _timings[f"{name}_driver_cpu_s"] = _cpu_s() - cpu

    return wrapper


def _write(path: str) -> None:
    _timings["exit"] = time.time()
    _timings["driver_maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    _timings["driver_cpu_s"] = _cpu_s()
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(_timings, fh)


def main(argv: list[str]) -> int:
    """Parse the probe's own flags, then hand the rest to ``raysweep.cli.main``."""
    timings_path: str | None = None
    while argv and argv[0].startswith("--"):
        flag, value, argv = argv[0], argv[1], argv[2:]
        if flag != "--timings":
            raise SystemExit(f"probe: unknown flag {flag}")
        timings_path = value
    if timings_path:
        atexit.register(_write, timings_path)
    # raysweep's promise: its Ray env defaults are set before Ray Tune is imported.
    try:
        from raysweep.engines.ray.ray_env import apply_ray_env_defaults
    except ImportError:  # a tree from before the tuner package (2026-11-22)
        from raysweep.runner.tuning import apply_ray_env_defaults  # type: ignore[no-redef]

    apply_ray_env_defaults()
    import ray
    from ray import tune

    _timings["imported"] = time.time()
    ray.init = _timed("ray", ray.init)
    tune.Tuner.fit = _timed("fit", tune.Tuner.fit)  # type: ignore[method-assign]
    from raysweep import cli

    if hasattr(cli, "console"):
        cli.console(argv)  # as the console script does: main, then a prompt exit
    return int(cli.main(argv) or 0)  # an older tree (benchmarks of a prototype or base)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
