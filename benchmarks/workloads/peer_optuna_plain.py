"""The peer: the same sweep written in plain Optuna, in one process (no raysweep, no Ray).

    python -m benchmarks.workloads.peer_optuna_plain --workload demo --timings t.json

What a user would write instead of ``sweep run`` for a one-machine GBM sweep:
``study.optimize(objective, n_trials, n_jobs=slots)`` with the GBM library
releasing the GIL. The work matches raysweep's built-in trainables: the same
bundled dataset and stratified split (``train_test_split``, seed = the sweep's
seed), the same library parameters (one thread, the trial's seed, deterministic
LightGBM, XGBoost's ``hist``), the same rounds and report cadence, the same
sampler and seed, and Optuna's pruner closest to the sweep's scheduler
(successive halving for ASHA, none for FIFO). The validation loss is computed
with the same formula. Workloads are defined in ``benchmarks.suite.peer_optuna``.
"""

from __future__ import annotations

import time

STARTED = time.time()

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import optuna  # noqa: E402
from sklearn import datasets  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

from benchmarks.workloads.peer_workloads import WORKLOADS, Workload  # noqa: E402

_IMPORTED = time.time()


def split(name: str, seed: int) -> tuple[np.ndarray, ...]:
    """The bundled dataset split as raysweep splits it (25% stratified validation rows)."""
    bunch = getattr(datasets, f"load_{name}")()
    _, y = np.unique(bunch.target, return_inverse=True)
    parts = train_test_split(
        np.asarray(bunch.data).astype(np.float32),
        y.astype(np.int64),
        test_size=0.25,
        random_state=seed % 2**32,
        stratify=y,
    )
    return tuple(np.ascontiguousarray(p) for p in parts)


def log_loss(y: np.ndarray, p: np.ndarray) -> float:
    """Mean log loss of probabilities ``p`` ((n,) for binary, (n, k) otherwise)."""
    eps = 1e-15
    if p.ndim == 1:
        p1 = np.clip(p, eps, 1 - eps)
        return float(-np.mean(np.where(y == 1, np.log(p1), np.log1p(-p1))))
    probs = np.clip(p, eps, None)
    probs /= probs.sum(axis=1, keepdims=True)
    return float(-np.mean(np.log(probs[np.arange(len(y)), y])))


def suggest(trial: optuna.Trial, space: dict[str, Any]) -> dict[str, Any]:
    """Optuna's suggestion for each entry of a sweep.json ``space``."""
    params: dict[str, Any] = {}
    for name, spec in space.items():
        if not isinstance(spec, dict):
            params[name] = spec
        elif spec["type"] == "loguniform":
            params[name] = trial.suggest_float(name, spec["low"], spec["high"], log=True)
        elif spec["type"] == "uniform":
            params[name] = trial.suggest_float(name, spec["low"], spec["high"])
        elif spec["type"] == "int":
            step = spec.get("step", 1)
            log = bool(spec.get("log", False))
            params[name] = trial.suggest_int(
                name, spec["low"], spec["high"], step=1 if log else step, log=log
            )
        elif spec["type"] == "choice":
            params[name] = trial.suggest_categorical(name, spec["values"])
        else:
            raise ValueError(f"{name}: no Optuna equivalent for {spec['type']!r}")
    return params


def objective_for(work: Workload, data: tuple[np.ndarray, ...]) -> Any:
    """The objective as an Optuna user writes it: the library's own training loop and
    validation loss, a callback reporting every ``report_every`` rounds and pruning."""
    X_train, X_val, y_train, y_val = data
    args = work.config["trainable_args"]
    rounds, every = int(args["num_boost_round"]), int(args.get("report_every", 1))
    seed = int(work.config["seed"])
    n_classes = int(y_train.max()) + 1
    multi = n_classes > 2

    def report(trial: optuna.Trial, step: int, loss: float) -> None:
        trial.report(loss, step)
        if trial.should_prune():
            raise optuna.TrialPruned()

    def lightgbm(trial: optuna.Trial) -> float:
        import lightgbm as lgb

        params = {"seed": seed + trial.number, "num_threads": 1, "verbosity": -1,
                  "deterministic": True, "force_row_wise": True,
                  "metric": "multi_logloss" if multi else "binary_logloss",
                  **({"num_class": n_classes} if multi else {}),
                  **suggest(trial, work.config["space"])}  # fmt: skip
        train_set = lgb.Dataset(X_train, y_train)
        val_set = lgb.Dataset(X_val, y_val, reference=train_set)
        losses: list[float] = []

        def callback(env: Any) -> None:
            if (env.iteration + 1) % every == 0:
                losses.append(float(env.evaluation_result_list[0][2]))
                report(trial, len(losses), losses[-1])

        lgb.train(params, train_set, num_boost_round=rounds, valid_sets=[val_set],
                  callbacks=[callback])  # fmt: skip
        return losses[-1]

    def xgboost(trial: optuna.Trial) -> float:
        import xgboost as xgb

        params = {"seed": seed + trial.number, "nthread": 1, "tree_method": "hist",
                  "objective": "multi:softprob" if multi else "binary:logistic",
                  "eval_metric": "mlogloss" if multi else "logloss",
                  **({"num_class": n_classes} if multi else {}),
                  **suggest(trial, work.config["space"])}  # fmt: skip
        dtrain = xgb.DMatrix(X_train, y_train)
        dval = xgb.DMatrix(X_val, y_val)
        losses: list[float] = []

        class Report(xgb.callback.TrainingCallback):
            def after_iteration(self, model: Any, epoch: int, evals_log: Any) -> bool:
                if (epoch + 1) % every == 0:
                    losses.append(float(next(iter(evals_log["val"].values()))[-1]))
                    report(trial, len(losses), losses[-1])
                return False

        xgb.train(params, dtrain, num_boost_round=rounds, evals=[(dval, "val")],
                  verbose_eval=False, callbacks=[Report()])  # fmt: skip
        return losses[-1]

    return {"lightgbm": lightgbm, "xgboost": xgboost}[work.config["trainable"]]


def raysweep_objective_for(work: Workload) -> Any:
    """The objective through raysweep's own built-in trainable code, without Ray.

    The same data loader and split, parameters, seeds, report cadence and
    checkpoint writes as a ``sweep run`` trial; each report goes to Optuna. This
    prices raysweep's trainable code apart from Ray Tune's.
    """
    from raysweep.repro.seeds import trial_seed_for
    from raysweep.trainables.context import TrialContext
    from raysweep.trainables.data import load_dataset
    from raysweep.trainables.gbm import fit_gbm

    config = work.config
    args = config["trainable_args"]
    seed = int(config["seed"])
    dataset = load_dataset(args, seed)
    every = int(config.get("checkpoint", {}).get("frequency", 5))

    def objective(trial: optuna.Trial) -> float:
        ctx = TrialContext(index=trial.number, seed=trial_seed_for(seed, trial.number),
                           metric=config["metric"], mode=config["mode"], trainable_args=args,
                           checkpoint_frequency=every, master_seed=seed)  # fmt: skip
        last: list[float] = []

        def report(values: dict[str, float], _checkpoint: Any) -> None:
            last.append(float(values[config["metric"]]))
            trial.report(last[-1], len(last))
            if trial.should_prune():
                raise optuna.TrialPruned()

        fit_gbm(config["trainable"], suggest(trial, config["space"]), ctx, dataset, report)
        return last[-1]

    return objective


def sampler_for(work: Workload) -> optuna.samplers.BaseSampler:
    """The sweep's searcher as an Optuna sampler, with the sweep's seed."""
    search = work.config["search"]
    seed = int(work.config["seed"])
    if search["algorithm"] == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    options = search.get("options", {})
    return optuna.samplers.TPESampler(
        n_startup_trials=int(options.get("n_startup_trials", 10)), seed=seed
    )


def pruner_for(work: Workload) -> optuna.pruners.BasePruner:
    """Successive halving for ASHA (same grace period and rate), none for FIFO."""
    scheduler = work.config.get("scheduler", {"type": "fifo"})
    if scheduler["type"] != "asha":
        return optuna.pruners.NopPruner()
    return optuna.pruners.SuccessiveHalvingPruner(
        min_resource=int(scheduler["grace_period"]),
        reduction_factor=int(scheduler["reduction_factor"]),
    )


def main(argv: list[str] | None = None) -> int:
    """Run one workload's study; write timings (and trial end times) as JSON."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workload", required=True, choices=sorted(WORKLOADS))
    p.add_argument("--trials", type=int, default=None, help="override the trial count")
    p.add_argument("--timings", required=True)
    p.add_argument(
        "--raysweep-trainable",
        action="store_true",
        help="train through raysweep's built-in trainable code instead of the plain loop",
    )
    args = p.parse_args(argv)
    work = WORKLOADS[args.workload]
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if args.raysweep_trainable:
        objective = raysweep_objective_for(work)
    else:
        data = split(work.config["trainable_args"]["dataset"], int(work.config["seed"]))
        objective = objective_for(work, data)
    ends: list[float] = []
    study = optuna.create_study(
        direction="minimize", sampler=sampler_for(work), pruner=pruner_for(work)
    )
    optimize_start = time.time()
    study.optimize(
        objective,
        n_trials=args.trials or work.trials,
        n_jobs=work.slots,
        callbacks=[lambda _s, _t: ends.append(time.time())],
    )
    optimize_end = time.time()
    print(f"best {study.best_value:.5f} after {len(study.trials)} trials")
    timings = {"started": STARTED, "imported": _IMPORTED, "optimize_start": optimize_start,
               "optimize_end": optimize_end, "trial_ends": ends,
               "best": study.best_value}  # fmt: skip
    with open(args.timings, "w", encoding="utf-8") as fh:
        json.dump(timings, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
