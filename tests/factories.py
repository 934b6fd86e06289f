"""Factories the whole test suite shares, so each exists once.

- `sweep` in a fresh process: :func:`sweep_env`, :func:`run_sweep_cli`, and
  :func:`kill_group` for a process started in its own session;
- sweep.json data of a small sweep of any trainable: :func:`make_sweep`; of the
  quadratic example (``examples.quadratic:fit``) and its specs: :func:`quadratic_sweep`,
  :func:`make_spec`, :data:`QUADRATIC_SPACES`; of the trading trainable: :func:`trading_sweep`;
- a built-in trainable's trial context: :func:`ctx_for`;
- a CSV data set with missing values: :func:`csv_with_missing_values`;
- a port that accepts connections and never answers: :class:`SilentPort`; one
  that takes no connection at all: :class:`FullPort`.
- a finished run directory of hand-made reports: :func:`recorded_run`.

Test modules import it as ``factories`` (pyproject.toml's pytest ``pythonpath`` puts
this directory on sys.path); tests/conftest.py offers the same helpers as fixtures.
Not a test module.
"""

from __future__ import annotations

import contextlib
import copy
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from raysweep.config.schema import SweepSpec
    from raysweep.rundir import RunDir
    from raysweep.trainables.context import TrialContext

REPO = Path(__file__).resolve().parents[1]
SWEEP = [sys.executable, "-m", "raysweep.cli"]
QUADRATIC = "examples.quadratic:fit"
# Ray's variables a `sweep` process must not inherit from this one: RAY_ADDRESS, and the
# token settings (ray.init in the test session sets RAY_AUTH_MODE=token in os.environ)
INHERITED_RAY = ("RAY_ADDRESS", "RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")

# The space of ``examples.quadratic:fit`` that each search algorithm explores.
QUADRATIC_SPACES: dict[str, dict[str, Any]] = {
    "grid": {"x": {"type": "grid", "values": [1.0, 2.5, 4.0]}, "steps": 4},
    "random": {"x": {"type": "uniform", "low": 0, "high": 6}, "steps": 4},
    "optuna": {
        "x": {"type": "uniform", "low": 0, "high": 6},
        "y": {"type": "int", "low": -3, "high": 3},
        "steps": 4,
    },
    "hyperopt": {
        "x": {"type": "uniform", "low": 0, "high": 6},
        "y": {"type": "choice", "values": [-1, 0, 1]},
        "steps": 4,
    },
}


def sweep_env(pythonpath: Sequence[str | Path] = (), **extra: str) -> dict[str, str]:
    """This process's environment for a `sweep` process: this checkout's code importable
    (``pythonpath`` before it), no usage stats, none of :data:`INHERITED_RAY`;
    ``extra`` on top."""
    # never an address, nor the token mode an in-process ray.init of this test session set
    env = {k: v for k, v in os.environ.items() if k not in INHERITED_RAY}
    # this checkout's code, also where the installed package is another checkout's
    paths = [*map(str, pythonpath), str(REPO), str(REPO / "src")]
    env.update(PYTHONPATH=os.pathsep.join(paths), RAY_USAGE_STATS_ENABLED="0")
    env.update(extra)
    return env


def run_sweep_cli(
    *args: str,
    timeout: float = 300,
    env: dict[str, str] | None = None,
    cwd: Path = REPO,
    pythonpath: Sequence[str | Path] = (),
) -> subprocess.CompletedProcess[str]:
    """``python -m raysweep.cli ARGS`` in a fresh process (so a fresh Ray), output captured.

    ``env``: variables to set on top of :func:`sweep_env`; ``pythonpath``: folders
    importable before this checkout (a user's trainable).
    """
    return subprocess.run(
        [*SWEEP, *args],
        cwd=cwd,
        env=sweep_env(pythonpath, **(env or {})),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def kill_group(proc: subprocess.Popen[str]) -> None:
    """SIGKILL a process started in its own session and everything in its group
    (a `sweep` driver and its Ray: a whole-tree crash), then reap it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def sweep_in_process(
    tmp_path: Path, data: dict[str, Any], **options: Any
) -> tuple[int, RunDir, str]:
    """Run sweep.json ``data`` in this process (``sweep run``'s path, ``api.run_sweep``):
    its exit code, run directory and output. The config goes to ``tmp_path/<name>.json``,
    the run under ``tmp_path/runs``; ``options``: further ``api.RunOptions`` fields."""
    import io
    import json

    from raysweep import api
    from raysweep.rundir import RunDir

    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / f"{data['name']}.json"
    path.write_text(json.dumps(data))
    out = io.StringIO()
    code = api.run_sweep(api.RunOptions(config=path, storage=tmp_path / "runs", **options), out=out)
    return code, RunDir(tmp_path / "runs" / data["name"]), out.getvalue()


# a built-in model's data and one parameter: (trainable_args, space)
MODELS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    **{gbm: ({"dataset": "breast_cancer", "num_boost_round": 10},
             {"learning_rate": {"type": "loguniform", "low": 0.01, "high": 0.3}})
       for gbm in ("lightgbm", "xgboost", "catboost")},
    "torch_mlp": ({"dataset": "wine", "epochs": 2},
                  {"lr": {"type": "loguniform", "low": 0.001, "high": 0.1}}),
}  # fmt: skip


def _base_sweep(trainable: str) -> dict[str, Any]:
    """A fresh copy of :func:`make_sweep`'s base for ``trainable``."""
    one_at_a_time = {"algorithm": "random", "num_samples": 2, "max_concurrent": 1}
    if trainable in MODELS:
        args, space = copy.deepcopy(MODELS[trainable])
        return {"name": trainable, "trainable": trainable, "trainable_args": args,
                "metric": "val_loss", "mode": "min", "space": space,
                "search": one_at_a_time, "seed": 42}  # fmt: skip
    if trainable == "trading":
        return {
            "name": "t",
            "trainable": "trading",
            "trainable_args": {"synthetic": {"bars": 800}, "n_folds": 2},
            "metric": "composite",
            "mode": "max",
            "space": {"entry_threshold": {"type": "uniform", "low": 0.4, "high": 0.6}},
        }
    return {  # the quadratic example, or a user's trainable that reports "loss" as it does
        "name": "small",
        "trainable": trainable,
        "metric": "loss",
        "mode": "min",
        "space": {"x": {"type": "uniform", "low": 0, "high": 1}},
        "search": one_at_a_time,
        "seed": 42,
    }


def make_sweep(trainable: str = QUADRATIC, **fields: Any) -> dict[str, Any]:
    """sweep.json data of a small sweep of ``trainable``; ``fields`` replace or add
    top-level keys (a new dict each call: callers may change it).

    The bases, each valid as it is:

    - :data:`QUADRATIC` (the default), or any ``module:function`` that reports ``loss``
      as the quadratic example does: name ``small``, x uniform in [0, 1], ``loss`` min;
    - ``lightgbm``, ``xgboost``, ``catboost``: named after the trainable, 10 boosting
      rounds on scikit-learn's breast_cancer, learning_rate loguniform in [0.01, 0.3],
      ``val_loss`` min;
    - ``torch_mlp``: 2 epochs on wine, lr loguniform in [0.001, 0.1], ``val_loss`` min;

    each of them 2 random trials one at a time, seed 42; and

    - ``trading``: name ``t``, 800 synthetic bars in 2 folds, entry_threshold uniform in
      [0.4, 0.6], ``composite`` max, the search and seed left to their defaults.
    """
    return {**_base_sweep(trainable), **fields}


def quadratic_sweep(**fields: Any) -> dict[str, Any]:
    """sweep.json data of a small sweep; ``fields`` replace or add top-level keys
    (``trainable`` too: the base stays the quadratic example's).

    2 random trials of the quadratic example over x in [0, 1], one at a time, seed 42:
    :func:`make_sweep`'s default.
    """
    return {**make_sweep(), **fields}


def make_spec(**fields: Any) -> SweepSpec:
    """The validated spec of :func:`quadratic_sweep` with ``fields``."""
    from raysweep.config.load import parse_spec

    return parse_spec(quadratic_sweep(**fields))


def ctx_for(args: dict[str, Any], seed: int = 7, **fields: Any) -> TrialContext:
    """Trial 0 of a built-in trainable minimising ``val_loss``: ``args`` are its
    trainable_args, ``fields`` the other TrialContext fields (``cpus``, checkpoints)."""
    from raysweep.trainables.context import TrialContext

    return TrialContext(
        index=0, seed=seed, metric="val_loss", mode="min", trainable_args=args, **fields
    )


def trading_sweep(space: dict[str, Any] | None = None, **args: Any) -> dict[str, Any]:
    """sweep.json data of the built-in trading trainable on 800 synthetic bars, 2 folds
    (:func:`make_sweep`'s ``trading``); ``args`` are added to its trainable_args."""
    data = make_sweep("trading")
    data["trainable_args"].update(args)
    if space:
        data["space"] = space
    return data


def csv_with_missing_values(path: Path) -> Path:
    """60 rows of features a, b, c and a binary ``target``, every 7th ``a`` missing,
    written to ``path``: CatBoost's ``nan_mode`` Forbidden fails on it in training only
    (the parameter check's tiny sample has no missing value)."""
    rows = ["a,b,c,target"]
    for i in range(60):
        a = "" if i % 7 == 0 else str(i % 11 / 10)
        rows.append(f"{a},{(i * 7) % 13 / 13},{(i * 3) % 5},{i % 2}")
    path.write_text("\n".join(rows) + "\n")
    return path


def fx_hourly_bars(rows: int = 3000, seed: int = 5) -> Any:
    """Hourly EUR/USD-like bars as a pandas DataFrame indexed by an unnamed timestamp, in
    the shape of backtesting.py's ``EURUSD.csv`` once written with ``to_csv()`` (header
    ``,Open,High,Low,Close,Volume``): price near 1.2, about 0.1 % per hour, integer
    volumes, no bars from Friday 21:00 to Sunday 21:00 UTC (the market's weekend gap)."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    hours = pd.date_range("2004-08-19", periods=rows * 2, freq="1h")
    open_market = ~(
        ((hours.dayofweek == 4) & (hours.hour >= 21))
        | (hours.dayofweek == 5)
        | ((hours.dayofweek == 6) & (hours.hour < 21))
    )
    stamps = hours[open_market][:rows]
    close = 1.2 * np.exp(np.cumsum(rng.normal(0, 0.001, rows)))
    open_ = np.concatenate([[1.2], close[:-1]])
    wick = np.abs(rng.normal(0, 0.0004, (2, rows)))
    return pd.DataFrame(
        {
            "Open": open_.round(5),
            "High": (np.maximum(open_, close) * (1 + wick[0])).round(5),
            "Low": (np.minimum(open_, close) * (1 - wick[1])).round(5),
            "Close": close.round(5),
            "Volume": rng.integers(100, 5000, rows),
        },
        index=pd.DatetimeIndex(stamps),
    )


class SilentPort:
    """A TCP port on 127.0.0.1 that accepts every connection and never says a word
    (a service that is not Ray's, or a host whose Ray hangs); a context manager.

    ``accepted`` counts the connections taken so far.
    """

    def __init__(self) -> None:
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._server.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"
        self._held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def accepted(self) -> int:
        return len(self._held)

    def _accept(self) -> None:
        while True:
            try:
                self._held.append(self._server.accept()[0])
            except OSError:  # closed
                return

    def __enter__(self) -> SilentPort:
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.close()
        for conn in self._held:
            conn.close()


class FullPort:
    """A TCP port on 127.0.0.1 whose queue of connections is full: a new connection
    gets no answer at all and times out, as through a firewall that drops packets
    (Linux drops the handshake while the queue is full); a context manager."""

    def __init__(self, queued: int = 4) -> None:
        self._server = socket.create_server(("127.0.0.1", 0), backlog=0)
        self.address = f"127.0.0.1:{self._server.getsockname()[1]}"
        self._queued: list[socket.socket] = []
        for _ in range(queued):  # never accepted: they fill the queue
            client = socket.socket()
            client.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                client.connect(self._server.getsockname())
            self._queued.append(client)

    def __enter__(self) -> FullPort:
        return self

    def __exit__(self, *exc: object) -> None:
        for client in self._queued:
            client.close()
        self._server.close()


def recorded_run(
    path: Path,
    results: dict[str, Any],
    starts: Sequence[tuple[str, float]],
    rows: dict[str, list[tuple[int, float, float]]],
) -> Path:
    """A run directory as ``sweep run`` leaves it, from hand-made records: ``results``
    (results.json), each trial's ``(trial id, start time)`` in trial_info.jsonl and its
    Ray result rows ``(training_iteration, time_total_s, value of results["metric"])``."""
    import json

    from raysweep.rundir import Part, RunDir

    run_dir = RunDir(path)
    run_dir.path.mkdir(parents=True)
    run_dir.mark("running")
    run_dir.set_parts([Part("tune", 2)])
    (run_dir.path / "results.json").write_text(json.dumps(results))
    (run_dir.path / "trial_info.jsonl").write_text(
        "".join(json.dumps({"trial_id": t, "event": "start", "t": at}) + "\n" for t, at in starts)
    )
    for trial_id, made in rows.items():
        folder = run_dir.path / "tune" / f"trial_{trial_id}"
        folder.mkdir(parents=True)
        folder.joinpath("result.json").write_text("".join(json.dumps(
            {"trial_id": trial_id, "training_iteration": i, "time_total_s": s,
             results["metric"]: v}) + "\n" for i, s, v in made))  # fmt: skip
    return run_dir.path
