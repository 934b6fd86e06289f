"""GBM seed/thread/device/determinism parameters, checked against the real libraries."""

from __future__ import annotations

import numpy as np
import pytest

from raysweep.errors import GPUError
from raysweep.repro.gbm_params import (
    CATBOOST_GPU_WARNING,
    GBMParams,
    gbm_params,
    lightgbm_gpu_device_type,
    visible_ordinals,
)


def _lightgbm_has_gpu() -> bool:
    try:
        lightgbm_gpu_device_type()
    except GPUError:
        return False
    return True


def _xy() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.random((200, 4))
    return X, (X[:, 0] + 0.1 * rng.random(200) > 0.5).astype(int)


def test_lightgbm_cpu_params_are_accepted_and_deterministic() -> None:
    import lightgbm as lgb

    p = gbm_params("lightgbm", seed=3, threads=2, gpu=False, deterministic=True)
    assert isinstance(p, GBMParams) and p.warnings == ()
    assert p.params == {"seed": 3, "num_threads": 2, "verbosity": -1, "deterministic": True,
                        "device_type": "cpu", "force_row_wise": True}  # fmt: skip
    loose = gbm_params("lightgbm", seed=3, threads=2, gpu=False, deterministic=False)
    assert loose.params["deterministic"] is False and "force_row_wise" not in loose.params
    X, y = _xy()
    params = {**p.params, "objective": "binary", "bagging_fraction": 0.5, "bagging_freq": 1}
    preds = [lgb.train(params, lgb.Dataset(X, y), 5).predict(X) for _ in range(2)]
    assert np.array_equal(*preds)


def test_xgboost_params() -> None:
    import xgboost as xgb

    p = gbm_params("xgboost", seed=3, threads=1, gpu=False, deterministic=True)
    assert p.params == {"seed": 3, "nthread": 1, "tree_method": "hist", "device": "cpu"}
    X, y = _xy()
    params = {**p.params, "objective": "binary:logistic", "subsample": 0.5}
    preds = [xgb.train(params, xgb.DMatrix(X, y), 5).predict(xgb.DMatrix(X)) for _ in range(2)]
    assert np.array_equal(*preds)
    gpu = gbm_params("xgboost", seed=3, threads=1, gpu=True, deterministic=True)
    assert gpu.params["device"] == "cuda:0"


def test_catboost_params() -> None:
    import catboost

    p = gbm_params("catboost", seed=3, threads=1, gpu=False, deterministic=True)
    assert p.params == {"random_seed": 3, "thread_count": 1, "task_type": "CPU",
                        "allow_writing_files": False, "verbose": False}  # fmt: skip
    assert p.warnings == ()
    X, y = _xy()
    preds = [catboost.CatBoostClassifier(iterations=5, **p.params).fit(X, y).predict_proba(X)
             for _ in range(2)]  # fmt: skip
    assert np.array_equal(*preds)


def test_catboost_gpu_devices_and_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")
    p = gbm_params("catboost", seed=1, threads=4, gpu=True, deterministic=True, gpu_ids=["2", "3"])
    assert (p.params["task_type"], p.params["devices"]) == ("GPU", "0:1")
    assert p.warnings == (CATBOOST_GPU_WARNING,)
    assert "non-deterministic" in CATBOOST_GPU_WARNING
    assert "gpu_ram_part" not in p.params  # whole GPUs: CatBoost's own default


def test_catboost_on_a_gpu_share_reserves_only_that_share(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """CatBoost reserves 95% of the card by default, starving trials that share it."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    p = gbm_params("catboost", seed=1, threads=1, gpu=True, deterministic=False, gpu_ids=["1"],
                   gpu_fraction=0.25)  # fmt: skip
    assert p.params["gpu_ram_part"] == pytest.approx(0.25 * 0.95)
    assert "gpu_ram_part" not in gbm_params("catboost", 1, 1, False, False, (), 0.25).params


def test_visible_ordinals(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert visible_ordinals(["1", "3"]) == [1, 3]
    assert visible_ordinals([]) == [0]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "5,1")
    assert visible_ordinals(["1"]) == [1] and visible_ordinals(["5"]) == [0]
    assert visible_ordinals(["7", "8"]) == [0, 1]  # the process sees exactly two devices
    with pytest.raises(GPUError, match="GPU\\(s\\) 2 not in this process's CUDA_VISIBLE_DEVICES"):
        visible_ordinals(["2"])


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="threads must be >= 1"):
        gbm_params("xgboost", seed=1, threads=0, gpu=False, deterministic=True)
    with pytest.raises(ValueError, match="unknown GBM library 'sklearn'"):
        gbm_params("sklearn", seed=1, threads=1, gpu=False, deterministic=True)  # type: ignore[arg-type]


def test_lightgbm_gpu_without_gpu_explains_both_builds() -> None:
    if _lightgbm_has_gpu():
        pytest.skip("LightGBM can use a GPU here")
    with pytest.raises(GPUError) as err:
        gbm_params("lightgbm", seed=1, threads=1, gpu=True, deterministic=True)
    message = str(err.value)
    assert "device_type='cuda' failed" in message and "device_type='gpu' (OpenCL) failed" in message
    assert "USE_CUDA=ON" in message


@pytest.mark.gpu
def test_lightgbm_gpu_params_on_a_gpu() -> None:
    if not _lightgbm_has_gpu():  # the explained failure is tested above
        pytest.skip("LightGBM has no GPU learner here (no NVIDIA OpenCL runtime, no CUDA build)")
    p = gbm_params("lightgbm", seed=1, threads=1, gpu=True, deterministic=True, gpu_ids=())
    assert p.params["device_type"] in ("cuda", "gpu") and p.params["gpu_device_id"] == 0
    assert p.params.get("gpu_use_dp", True) is True and p.warnings
