"""Trainables the benchmarks run, shared by ``sweep run`` and the raw Ray Tune scripts.

Plain Ray Tune function trainables; no raysweep import. The first call in each
worker process writes a timestamp file into ``$RAYSWEEP_BENCH_MARKERS`` (when
set): the earliest such file is the moment the first trial's body ran.
"""

from __future__ import annotations

import math
import os
import time
from typing import Any

from ray import tune

from benchmarks.harness.common import MARKER_ENV

_marked = False


def mark_first_call() -> None:
    """Write ``<markers>/<pid>`` with the current time, once per process."""
    global _marked
    if _marked:
        return
    _marked = True
    directory = os.environ.get(MARKER_ENV)
    if directory:
        path = os.path.join(directory, f"{os.getpid()}.txt")
        try:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(repr(time.time()))
        except OSError:
            pass  # a missing marker only loses the time-to-first-trial figure


def noop(config: dict[str, Any]) -> None:
    """Reports once and returns: what is left is scheduling overhead."""
    mark_first_call()
    tune.report({"loss": float(config.get("x", 0.0))})


def sleeper(config: dict[str, Any]) -> None:
    """Sleeps ``sleep_s`` (1 s) and reports once."""
    mark_first_call()
    time.sleep(float(config.get("sleep_s", 1.0)))
    tune.report({"loss": float(config.get("x", 0.0))})


def branin_value(x1: float, x2: float) -> float:
    """The Branin function on x1 in [-5, 10], x2 in [0, 15]; global minimum 0.397887."""
    a, b, c = 1.0, 5.1 / (4 * math.pi**2), 5 / math.pi
    r, s, t = 6.0, 10.0, 1 / (8 * math.pi)
    return a * (x2 - b * x1**2 + c * x1 - r) ** 2 + s * (1 - t) * math.cos(x1) + s


def branin(config: dict[str, Any]) -> None:
    """Deterministic, one report per trial: ``value`` = Branin(x1, x2), to minimise."""
    mark_first_call()
    tune.report({"value": branin_value(float(config["x1"]), float(config["x2"]))})


def sgd_breast_cancer(config: dict[str, Any]) -> None:
    """Logistic regression by SGD on breast_cancer, one report (``val_loss``) per epoch.

    The early-stopping benchmark's stand-in when the built-in ``lightgbm``
    trainable is not available.
    """
    import numpy as np
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import SGDClassifier
    from sklearn.metrics import log_loss
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    mark_first_call()
    x, y = load_breast_cancer(return_X_y=True)
    x_train, x_val, y_train, y_val = train_test_split(x, y, test_size=0.25, random_state=0)
    scaler = StandardScaler().fit(x_train)
    x_train, x_val = scaler.transform(x_train), scaler.transform(x_val)
    model = SGDClassifier(
        loss="log_loss",
        alpha=float(config["alpha"]),
        learning_rate="constant",
        eta0=float(config["eta0"]),
        random_state=0,
    )
    classes = np.unique(y)
    for _ in range(int(config.get("epochs", 81))):
        model.partial_fit(x_train, y_train, classes=classes)
        proba = np.clip(model.predict_proba(x_val)[:, 1], 1e-7, 1 - 1e-7)
        tune.report({"val_loss": float(log_loss(y_val, proba, labels=classes))})
