"""The users' trading workload in the search-quality benchmark: walk-forward folds as fidelity.

raysweep's built-in ``trading`` trainable (docs/trading.md) with its LightGBM entry
model on seeded synthetic bars (no download), tuning the entry model and the trading
parameters of ``sweeps/trading.json``. Fidelity ``z`` is the number of walk-forward
folds evaluated; the value at ``z`` is the trial's ``composite`` score over its first
``z`` folds, negated (every optimizer minimizes).

Held out: the generator draws ``BARS`` bars; the optimizers' trainable reads the first
``SELECTION_BARS`` from a Parquet file (``ARGS``: 8 folds of ``VAL_BARS`` bars after
``MIN_TRAIN_BARS``), and never the last ``HELD_OUT_FOLDS`` x ``VAL_BARS``, which come
after every fold's bars. A configuration's held-out score is the composite of those
later folds alone, each trained walk-forward on every bar before it (the same folds,
extended: ``HELD_OUT_ARGS``), by the trainable's own fold code (``held_out``).

The entry model has no row or column sampling, so LightGBM is deterministic and
the trial's seed changes nothing: a configuration's value is a function of the
configuration alone (tests/benchmarks/test_search_quality_trading.py checks it).

Evaluations run the trainable's own ``fit_trading`` in this process where raysweep
is importable; the peers' environment (no raysweep there) asks a server in the
project's environment instead (``python -m benchmarks.workloads.search_quality_trading
--serve``, one JSON line per configuration, the interpreter named by ``PYTHON_ENV``),
so both sides score a configuration with the same code.

Regret: ``REFERENCE``'s optimum (the best held-out composite of a long random search;
search_quality_references.json: its command, seed and date) minus the configuration's.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchmarks.workloads.search_quality_holdout import DATA_DIR, Reference
from benchmarks.workloads.search_quality_space import Param
from benchmarks.workloads.search_quality_space import random_configs as draw

REPO = Path(__file__).resolve().parents[2]
# the interpreter of raysweep's environment, for a process that has no raysweep
PYTHON_ENV = "RAYSWEEP_BENCH_PYTHON"
N_FOLDS = 8
HELD_OUT_FOLDS = 4
VAL_BARS = 375
MIN_TRAIN_BARS = 3000
SELECTION_BARS = MIN_TRAIN_BARS + N_FOLDS * VAL_BARS  # 6000: what the optimizers see
BARS = SELECTION_BARS + HELD_OUT_FOLDS * VAL_BARS  # 7500
SYNTHETIC = {"bars": BARS, "seed": 7}
# the trainable_args of the optimizers' sweeps, but "data": the selection file (``args``)
ARGS: dict[str, Any] = {
    "n_folds": N_FOLDS,
    "val_bars": VAL_BARS,
    "min_train_bars": MIN_TRAIN_BARS,
    "embargo": 24,
    "num_boost_round": 40,
    "fee_bps": 10,
    "slippage_bps": 5,
}
HELD_OUT_ARGS = {**ARGS, "n_folds": N_FOLDS + HELD_OUT_FOLDS}  # the same folds, then later ones
# sweeps/trading.json's space for the LightGBM entry model (the default entry_model)
PARAMS = (
    Param("lightgbm.num_leaves", 4, 64, log=True, integer=True),
    Param("lightgbm.learning_rate", 0.02, 0.2, log=True),
    Param("label_horizon", 4, 24, integer=True),
    Param("label_threshold", 0.002, 0.01, log=True),
    Param("entry_threshold", 0.4, 0.65),
    Param("stop_loss", 0.01, 0.05),
    Param("take_profit", 0.02, 0.1),
    Param("max_holding", 6, 48, integer=True),
)
# the best held-out score of a random search, recorded with its command, seed and date
REFERENCE = Reference.of("trading")


def bars_file(held_out: bool = False) -> Path:
    """The synthetic bars as Parquet: every bar (``held_out``) or the first
    ``SELECTION_BARS``, the optimizers' (written once, named by the generator's settings)."""
    path = (
        DATA_DIR
        / f"trading-{BARS}-seed{SYNTHETIC['seed']}-{'all' if held_out else 'selection'}.parquet"
    )
    if not path.is_file():
        from raysweep.trainables.trading.synthetic import SyntheticOptions, synthetic_ohlcv

        frame = synthetic_ohlcv(SyntheticOptions(**SYNTHETIC))
        frame = frame if held_out else frame.iloc[:SELECTION_BARS]
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{time.time_ns()}.tmp")
        frame.to_parquet(tmp, index=False)
        tmp.replace(path)
    return path


def args(held_out: bool = False) -> dict[str, Any]:
    """The trainable_args: the optimizers' (``ARGS`` on the selection bars) or the held-out's."""
    return {**(HELD_OUT_ARGS if held_out else ARGS), "data": str(bars_file(held_out))}


class TradingProblem:
    """The problem ``trading``: the same interface as ``MFHartmann`` (value, regret, params)."""

    name = "trading"
    max_fidelity = N_FOLDS
    params = PARAMS
    cheap_regret = False  # a whole walk-forward evaluation: for a new incumbent only
    version = "heldout"  # recorded runs of the problem scored otherwise are not reused

    def __init__(self) -> None:
        self._curves: dict[tuple[float, ...], list[float]] = {}
        self._held_out: dict[tuple[float, ...], float] = {}
        self._server: Server | None = None

    @property
    def names(self) -> list[str]:
        return [p.name for p in PARAMS]

    @property
    def reference(self) -> float:
        """The value regrets are measured from, as the optimizers minimize it (negated)."""
        return -REFERENCE.optimum

    def sweep_fields(self) -> dict[str, Any]:
        """What a sweep.json of this problem sets: the built-in trainable, on Ray."""
        return {
            "trainable": "trading",
            "trainable_args": args(),
            "metric": "composite",
            "mode": "max",
            "execution": "ray",  # the local engine runs the GBM trainables only
            "checkpoint": {"frequency": 0},
        }

    def missing(self) -> str | None:
        """Why this problem cannot be evaluated here, else None."""
        if importlib.util.find_spec("raysweep") is None and not _python().exists():
            return f"no raysweep environment to evaluate in ({PYTHON_ENV} or .venv)"
        return None

    def value(self, config: Mapping[str, Any], z: int) -> float:
        """The composite over the first ``z`` folds, negated."""
        return -self.curve(config, z)[z - 1]

    def regret(self, config: Mapping[str, Any]) -> float:
        """The reference optimum minus the configuration's held-out composite."""
        clean = {p.name: p.cast(config[p.name]) for p in PARAMS}
        key = tuple(float(v) for v in clean.values())
        if key not in self._held_out:
            if importlib.util.find_spec("raysweep") is not None:
                self._held_out[key] = held_out(clean)
            else:
                self._server = self._server or Server(_python())
                self._held_out[key] = self._server.ask({"config": clean, "held_out": True})[0]
        return REFERENCE.optimum - self._held_out[key]

    def curve(self, config: Mapping[str, Any], folds: int = N_FOLDS) -> list[float]:
        """The composite after each of the first ``folds`` folds, or more (cached).

        A longer request than the cached curve evaluates at least 3 times its folds
        (the first folds again: a walk-forward evaluation has no shortcut), so a peer
        that asks fold by fold pays about one whole evaluation per configuration, and
        one that stops a configuration after its first fold pays for that fold alone.
        """
        clean = {p.name: p.cast(config[p.name]) for p in PARAMS}
        key = tuple(float(v) for v in clean.values())
        cached = len(self._curves.get(key, ()))
        if cached < folds:
            folds = min(N_FOLDS, max(folds, 3 * cached))
            if importlib.util.find_spec("raysweep") is not None:
                self._curves[key] = composites(clean, folds=folds)
            else:
                self._server = self._server or Server(_python())
                self._curves[key] = self._server.ask({"config": clean, "folds": folds})
        return self._curves[key]


class _Enough(Exception):
    """Raised by the report after the folds asked for: the evaluation stops there."""


def _context(trainable_args: dict[str, Any], seed: int) -> Any:
    from raysweep.trainables.context import TrialContext

    return TrialContext(index=0, seed=seed, metric="composite", mode="max",
                        trainable_args=trainable_args, cpus=1, deterministic=True)  # fmt: skip


def composites(config: Mapping[str, Any], seed: int = 0, folds: int = N_FOLDS) -> list[float]:
    """The trainable's composite after each of its first ``folds`` folds, as a trial on
    one CPU reports it."""
    from raysweep.trainables.trading.trainable import fit_trading

    out: list[float] = []

    def report(metrics: Mapping[str, float], _: object) -> None:
        out.append(float(metrics["composite"]))
        if len(out) >= folds:
            raise _Enough

    with contextlib.suppress(_Enough):
        fit_trading(dict(config), _context(args(), seed), report)
    return out


def held_out(config: Mapping[str, Any], seed: int = 0) -> float:
    """The composite of the ``HELD_OUT_FOLDS`` folds after every selection fold alone: each
    fitted, backtested and added up as the trainable's own loop does (fit_trading)."""
    from raysweep.trainables.trading.metrics import Cumulative
    from raysweep.trainables.trading.model import fit_predict
    from raysweep.trainables.trading.params import (
        Costs,
        ScoreArgs,
        TradingParams,
        entry_library,
        model_config,
    )
    from raysweep.trainables.trading.trainable import evaluate_fold, prepare

    trainable_args = args(held_out=True)
    ctx, library = _context(trainable_args, seed), entry_library(dict(config))
    params = model_config(dict(config), library)
    data = prepare(dict(config), trainable_args)

    def proba(fold: Any, train: Any, val: Any) -> Any:
        return fit_predict(library, params, ctx, fold.number, data.features[train],
                           data.labels.classes[train], data.features[val], data.names)  # fmt: skip

    cumulative = Cumulative()
    for fold in data.folds[N_FOLDS:]:
        evaluate_fold(data, fold, proba, TradingParams.from_config(dict(config)),
                      Costs.from_args(trainable_args), cumulative)  # fmt: skip
    return float(cumulative.metrics(data.periods, ScoreArgs.from_args(trainable_args))["composite"])


def _python() -> Path:
    return Path(os.environ.get(PYTHON_ENV) or REPO / ".venv" / "bin" / "python")


class Server:
    """``composites`` and ``held_out`` in a process of raysweep's environment: a JSON line
    each way."""

    def __init__(self, python: Path) -> None:
        self.proc = subprocess.Popen(
            [str(python), "-m", __name__, "--serve"], cwd=REPO, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        )  # fmt: skip

    def curve(self, config: Mapping[str, Any], folds: int = N_FOLDS) -> list[float]:
        return self.ask({"config": dict(config), "folds": folds})

    def ask(self, question: dict[str, Any]) -> list[float]:
        """The curve of ``{"config", "folds"}``, or ``[held-out composite]`` of
        ``{"config", "held_out": true}``."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(question) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the trading evaluator exited ({self.proc.wait()})")
        answer = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"the trading evaluator failed: {answer['error']}")
        return [float(v) for v in answer["curve"]]


def serve() -> None:
    """Answer each stdin line (a configuration and its folds, or ``held_out``) with its
    curve (stdout: JSON lines only)."""
    import logging

    logging.disable(logging.WARNING)  # the synthetic-data warning would go to stderr only
    for line in sys.stdin:
        try:
            asked = json.loads(line)
            if asked.get("held_out"):
                curve = [held_out(asked["config"])]
            else:
                curve = composites(asked["config"], folds=asked["folds"])
            answer: dict[str, Any] = {"curve": curve}
        except Exception as e:  # the caller raises it, with the evaluator's words
            answer = {"error": f"{type(e).__name__}: {e}"}
        print(json.dumps(answer), flush=True)


def random_configs(n: int, seed: int) -> list[dict[str, float | int]]:
    """``n`` configurations drawn uniformly (log-uniformly where ``log``) from ``PARAMS``."""
    return draw(PARAMS, n, seed)


def reference(fits: int, seed: int) -> dict[str, Any]:
    """The best held-out composite of a random search: the reference optimum."""
    started = time.perf_counter()
    best: tuple[float, dict[str, Any]] = (-math.inf, {})
    for i, config in enumerate(random_configs(fits, seed)):
        score = held_out(config)
        best = max(best, (score, config), key=lambda b: b[0])
        if (i + 1) % 10 == 0:  # the best so far, should the search be cut short
            print(json.dumps({"fits": i + 1, "optimum": best[0], "config": best[1]}),
                  file=sys.stderr, flush=True)  # fmt: skip
    return {"optimum": best[0], "config": best[1], "fits": fits, "seed": seed,
            "seconds": time.perf_counter() - started}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reference", action="store_true", help="run the long random search")
    p.add_argument("--serve", action="store_true", help="evaluate configurations from stdin")
    p.add_argument("--fits", type=int, default=REFERENCE.fits)
    p.add_argument("--seed", type=int, default=REFERENCE.seed)
    opts = p.parse_args(argv)
    if opts.serve:
        serve()
        return 0
    if not opts.reference:
        p.error("nothing to do: pass --reference or --serve")
    json.dump(reference(opts.fits, opts.seed), sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
