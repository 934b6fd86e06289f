"""Built-in GBM trainables: per-round metrics, determinism, bit-identical resume, Ray wiring."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from factories import ctx_for
from raysweep.errors import TrainableError
from raysweep.repro.gbm_params import Library
from raysweep.trainables.builtins import CHECKPOINT_META, reported_metrics
from raysweep.trainables.context import TrialContext
from raysweep.trainables.data import load_dataset
from raysweep.trainables.gbm import build_params, fit_gbm

LIBRARIES: list[Library] = ["lightgbm", "xgboost", "catboost"]
# Row/column sampling makes every library draw random numbers each round.
SAMPLING: dict[str, dict[str, Any]] = {
    "lightgbm": {"bagging_fraction": 0.7, "bagging_freq": 1, "feature_fraction": 0.7},
    "xgboost": {"subsample": 0.7, "colsample_bytree": 0.7},
    "catboost": {"depth": 4, "rsm": 0.7},
}


@pytest.fixture
def run_gbm(record_fit: Callable[..., Any]) -> Callable[..., Any]:
    """``record_fit`` of ``library`` (the first argument), the trial from ``ctx_for``."""

    def run(library: Library, *rest: Any, **options: Any) -> Any:
        return record_fit(partial(fit_gbm, library), partial(ctx_for, seed=42), *rest, **options)

    return run


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("dataset", ["breast_cancer", "wine", "diabetes"])
def test_reports_every_round(
    library: Library, dataset: str, tmp_path: Path, run_gbm: Callable[..., Any]
) -> None:
    args = {"dataset": dataset, "num_boost_round": 6}
    rec = run_gbm(library, tmp_path, {"learning_rate": 0.3}, args)
    assert [m["rounds"] for m in rec.metrics] == [1, 2, 3, 4, 5, 6]
    assert set(rec.metrics[-1]) == set(reported_metrics(library, args))
    first, last = rec.metrics[0], rec.metrics[-1]
    assert last["val_loss"] < first["val_loss"]
    if dataset == "diabetes":
        assert last["val_rmse"] ** 2 == pytest.approx(last["val_loss"])
        assert 0 < last["val_r2"] < 1
    else:
        assert 0.8 < last["val_accuracy"] <= 1


@pytest.mark.parametrize("library", LIBRARIES)
def test_report_every_and_same_seed_repeats(
    library: Library, tmp_path: Path, run_gbm: Callable[..., Any]
) -> None:
    args = {"dataset": "breast_cancer", "num_boost_round": 7, "report_every": 3}
    a = run_gbm(library, tmp_path, SAMPLING[library], args)
    b = run_gbm(library, tmp_path, SAMPLING[library], args)
    c = run_gbm(library, tmp_path, SAMPLING[library], args, seed=43)
    assert [m["rounds"] for m in a.metrics] == [3, 6, 7]
    assert a.metrics == b.metrics
    assert a.metrics != c.metrics


@pytest.mark.parametrize("library", LIBRARIES)
def test_resume_from_checkpoint_is_bit_identical(
    library: Library, tmp_path: Path, run_gbm: Callable[..., Any]
) -> None:
    args = {"dataset": "wine", "num_boost_round": 12, "report_every": 2}
    config = {**SAMPLING[library], "learning_rate": 0.2}
    full = run_gbm(library, tmp_path / "full", config, args, checkpoint_frequency=2)
    assert [m["rounds"] for m in full.metrics] == [2, 4, 6, 8, 10, 12]
    assert sorted(full.checkpoints) == [2, 4, 6]  # every 2 reports, and the last one
    # A trial stopped after its 3rd report restarts from the checkpoint of report 2.
    stopped = run_gbm(
        library, tmp_path / "stop", config, args, checkpoint_frequency=2, stop_after=3
    )
    assert stopped.metrics == full.metrics[:3]
    checkpoint = stopped.checkpoints[2]
    meta = json.loads((checkpoint / CHECKPOINT_META).read_text())
    assert meta["trainable"] == library and (meta["rounds"], meta["reports"]) == (4, 2)
    resumed = run_gbm(library, tmp_path / "resume", config, args, checkpoint_frequency=2,
                      resume=checkpoint)  # fmt: skip
    assert resumed.metrics == full.metrics[2:]


@pytest.mark.parametrize("library", LIBRARIES)
def test_pause_points_carry_checkpoints_and_resume_bit_identically(
    library: Library, tmp_path: Path, run_gbm: Callable[..., Any]
) -> None:
    """Hyperband's rungs get checkpoints even with checkpoint.frequency 0."""
    args = {"dataset": "wine", "num_boost_round": 9, "report_every": 1}
    config = {**SAMPLING[library], "learning_rate": 0.2}
    rungs = frozenset({1, 3, 9})
    full = run_gbm(library, tmp_path / "full", config, args, checkpoint_at=rungs)
    assert [m["rounds"] for m in full.metrics] == list(range(1, 10))
    assert sorted(full.checkpoints) == [1, 3, 9]
    paused = run_gbm(library, tmp_path / "pause", config, args, checkpoint_at=rungs, stop_after=3)
    resumed = run_gbm(library, tmp_path / "resume", config, args, checkpoint_at=rungs,
                      resume=paused.checkpoints[3])  # fmt: skip
    assert resumed.metrics == full.metrics[3:]
    combined = run_gbm(library, tmp_path / "both", config, args, checkpoint_frequency=4,
                       checkpoint_at=rungs)  # fmt: skip
    assert sorted(combined.checkpoints) == [1, 3, 4, 8, 9]


def test_checkpoint_of_another_trainable_is_refused(
    tmp_path: Path, run_gbm: Callable[..., Any]
) -> None:
    args = {"dataset": "wine", "num_boost_round": 2}
    rec = run_gbm("xgboost", tmp_path, {}, args, checkpoint_frequency=1)
    with pytest.raises(TrainableError, match="written by 'xgboost'"):
        run_gbm("lightgbm", tmp_path, {}, args, resume=rec.checkpoints[1])


def test_build_params_precedence() -> None:
    ds = load_dataset({"dataset": "wine"}, 0)
    config = {"num_iterations": 7, "seed": 1, "n_jobs": 8, "objective": "multiclassova",
              "learning_rate": 0.05}  # fmt: skip
    ctx = ctx_for({"dataset": "wine", "num_boost_round": 50}, seed=99)
    rounds, params = build_params("lightgbm", config, ctx, ds)
    assert rounds == 7  # a rounds alias in the config wins over trainable_args
    assert (params["seed"], params["num_threads"]) == (99, 1)  # the trial owns these
    assert "n_jobs" not in params and "num_iterations" not in params
    assert (params["objective"], params["num_class"]) == ("multiclassova", 3)
    assert params["learning_rate"] == 0.05 and params["metric"] == "None"
    assert params["deterministic"] is True and params["force_row_wise"] is True
    _, xgb = build_params("xgboost", {}, ctx, ds)
    assert (xgb["objective"], xgb["num_class"], xgb["seed"]) == ("multi:softprob", 3, 99)
    _, cat = build_params("catboost", {"iterations": 3, "verbose": True}, ctx, ds)
    assert (cat["loss_function"], cat["random_seed"], cat["verbose"]) == ("MultiClass", 99, False)


def _ray_trial(config: dict[str, Any]) -> None:
    """One Ray trial; with ``crash`` it dies right after its first checkpoint."""
    from ray import tune

    from raysweep.trainables import gbm
    from raysweep.trainables.builtins import ray_report

    config = dict(config)
    library, crash, args = config.pop("library"), config.pop("crash"), config.pop("args")
    ctx = ctx_for(args, seed=42, checkpoint_frequency=2)
    if crash and tune.get_checkpoint() is None:

        def report(metrics: dict[str, float], checkpoint_dir: Path | None) -> None:
            ray_report(metrics, checkpoint_dir)
            if checkpoint_dir is not None:
                raise RuntimeError("injected crash after the first checkpoint")

        gbm.fit_gbm(library, config, ctx, load_dataset(args, 0), report)
    getattr(gbm, f"train_{library}")(config, ctx)


def test_ray_trials_report_checkpoint_and_recover(
    ray_session: None, tmp_path: Path, run_gbm: Callable[..., Any]
) -> None:
    """Each trial crashes after its first checkpoint; Ray restarts it from there."""
    from ray import tune
    from ray.tune.logger import JsonLoggerCallback

    args = {"dataset": "breast_cancer", "num_boost_round": 8, "report_every": 2}
    config = {"learning_rate": 0.2}
    space = {"library": tune.grid_search(LIBRARIES), "crash": True, "args": args, **config}
    tuner = tune.Tuner(
        tune.with_resources(_ray_trial, {"cpu": 1}),
        param_space=space,
        tune_config=tune.TuneConfig(reuse_actors=True),
        run_config=tune.RunConfig(
            storage_path=str(tmp_path), name="gbm", verbose=0,
            failure_config=tune.FailureConfig(max_failures=1),
            # explicit: raysweep's runner may have switched Ray's default loggers off
            callbacks=[JsonLoggerCallback()],
        ),
    )  # fmt: skip
    results = tuner.fit()
    assert not results.errors
    assert len(results) == len(LIBRARIES)
    for result in results:
        library = result.config["library"]
        assert result.metrics is not None and result.checkpoint is not None
        assert result.metrics["rounds"] == 8 and result.metrics["training_iteration"] == 4
        files = {p.name for p in Path(result.checkpoint.path).iterdir()}
        assert CHECKPOINT_META in files and any(f.startswith("model.") for f in files)
        history = result.metrics_dataframe
        rounds = list(history["rounds"])  # rows Ray logged across the crash and restore
        assert rounds[-1] == 8 and set(rounds) <= {2, 4, 6, 8} and rounds == sorted(rounds)
        # the recovered trial ends exactly like an uninterrupted one
        clean = run_gbm(library, tmp_path / library, config, args, checkpoint_frequency=2)
        keys = ("val_loss", "val_accuracy")
        assert [result.metrics[k] for k in keys] == [clean.metrics[-1][k] for k in keys]


@pytest.mark.parametrize(
    ("library", "dataset", "config"),
    [
        ("lightgbm", "breast_cancer", {"learning_rate": 0.2, "num_leaves": 9,
                                       "feature_fraction": 0.7, "bagging_fraction": 0.6,
                                       "bagging_freq": 1}),
        ("lightgbm", "diabetes", {"learning_rate": 0.1, "feature_fraction": 0.8}),
        ("xgboost", "wine", {"eta": 0.2, "subsample": 0.7, "colsample_bytree": 0.6}),
        ("catboost", "wine", {"learning_rate": 0.2, "depth": 3, "rsm": 0.7}),
    ],
)  # fmt: skip
def test_segments_without_kept_checkpoints_report_what_checkpointed_ones_do(
    library: Library, dataset: str, config: dict[str, Any]
) -> None:
    """The in-process executor keeps no checkpoints; its trials must still equal Ray's."""
    data = load_dataset({"dataset": dataset}, 0)
    args = {"num_boost_round": 24, "report_every": 4}
    ctx = TrialContext(index=3, seed=77, metric="val_loss", mode="min", trainable_args=args,
                       checkpoint_frequency=2)  # fmt: skip
    kept: list[tuple[dict[str, float], bool]] = []
    memory: list[tuple[dict[str, float], bool]] = []
    fit_gbm(library, config, ctx, data, lambda m, c: kept.append((dict(m), c is not None)))
    fit_gbm(library, config, ctx, data, lambda m, c: memory.append((dict(m), c is not None)),
            keep_checkpoints=False)  # fmt: skip
    assert [m for m, _ in memory] == [m for m, _ in kept]
    assert any(c for _, c in kept)
    # LightGBM and XGBoost continue from memory; CatBoost still writes (and reads) its file.
    assert any(c for _, c in memory) == (library == "catboost")
