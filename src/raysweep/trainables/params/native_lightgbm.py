"""LightGBM's own parameter table and checks, through its C API, without ``import lightgbm``.

``import lightgbm`` imports scikit-learn, pandas and SciPy when they are
installed: 1.26 s of the 1.6 s a ``sweep validate`` of sweeps/demo.json took when
it went through the Python package (2-core VM). The C library the package wraps
holds everything validation needs — the parameter/alias table
(``LGBM_DumpParamAliases``) and the parameter checks that run when a booster is
built and trains a round — and loads in about 20 ms. This module calls exactly
those functions, as ``lightgbm.basic`` does; the trials themselves still use the
Python package.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.util
import json
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from raysweep.native_stderr import stderr_dropped

_DTYPE_FLOAT32 = 0  # C_API_DTYPE_FLOAT32
_DTYPE_FLOAT64 = 1  # C_API_DTYPE_FLOAT64
_SOURCE_LOCATION = re.compile(r"\s+at \S+, line \d+ \.\s*$")


@functools.cache
def _lib() -> ctypes.CDLL:
    """lib_lightgbm, found where the lightgbm package keeps it (ImportError when absent)."""
    spec = importlib.util.find_spec("lightgbm")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("No module named 'lightgbm'", name="lightgbm")
    package = Path(next(iter(spec.submodule_search_locations)))
    names = {"win32": "lib_lightgbm.dll", "darwin": "lib_lightgbm.dylib"}
    name = names.get(sys.platform, "lib_lightgbm.so")
    for candidate in (package / "lib" / name, package / name, package / "bin" / name):
        if candidate.is_file():
            try:
                lib = ctypes.cdll.LoadLibrary(str(candidate))
            except OSError as exc:  # e.g. its OpenMP runtime (libgomp) is missing
                raise ImportError(f"cannot load {candidate}: {exc}", name="lightgbm") from exc
            lib.LGBM_GetLastError.restype = ctypes.c_char_p
            return lib
    raise ImportError(f"lightgbm is installed but {name} was not found under {package}")


def _last_error(lib: ctypes.CDLL) -> str:
    raw = lib.LGBM_GetLastError()
    text = raw.decode("utf-8", errors="replace") if raw else "unknown LightGBM error"
    return _SOURCE_LOCATION.sub("", text).strip()


class LightGBMError(Exception):
    """A LightGBM C API call failed; the message is LightGBM's own."""


def _call(lib: ctypes.CDLL, result: int) -> None:
    if result != 0:
        raise LightGBMError(_last_error(lib))


@functools.cache
def param_aliases() -> dict[str, list[str]]:
    """Every LightGBM parameter of the installed version -> its aliases."""
    lib = _lib()
    size = 1 << 20
    for _ in range(2):
        buffer = ctypes.create_string_buffer(size)
        needed = ctypes.c_int64(0)
        _call(lib, lib.LGBM_DumpParamAliases(ctypes.c_int64(size), ctypes.byref(needed), buffer))
        if needed.value <= size:
            break
        size = needed.value
    table: dict[str, list[str]] = json.loads(buffer.value.decode("utf-8"))
    return table


def param_string(params: Mapping[str, Any]) -> str:
    """Parameters as the C API takes them (the rules of ``lightgbm.basic._param_dict_to_str``)."""
    pairs = []
    for key, value in params.items():
        if isinstance(value, list | tuple | set | np.ndarray):
            pairs.append(f"{key}={','.join(str(v) for v in value)}")
        elif isinstance(value, str | int | float | np.number | Path):
            pairs.append(f"{key}={value}")
        elif value is not None:
            raise LightGBMError(f"Unknown type of parameter:{key}, got:{type(value).__name__}")
    return " ".join(pairs)


def train_one_round(
    params: Mapping[str, Any], X: np.ndarray, y: np.ndarray, feature_names: Sequence[str]
) -> None:
    """Build a dataset and a booster with ``params`` and train one round; LightGBMError if refused.

    The same checks ``lightgbm.train`` meets: parameter parsing and ranges, conflicts
    between parameters, objective against labels.
    """
    lib = _lib()
    text = param_string(params).encode()
    data = np.ascontiguousarray(X, dtype=np.float64)
    label = np.ascontiguousarray(y, dtype=np.float32)
    dataset, booster = ctypes.c_void_p(), ctypes.c_void_p()
    rows, cols = data.shape
    with stderr_dropped():  # LightGBM prints "[LightGBM] [Fatal] ..."; the text comes back
        try:
            _call(lib, lib.LGBM_DatasetCreateFromMat(
                data.ctypes.data_as(ctypes.c_void_p), _DTYPE_FLOAT64, ctypes.c_int32(rows),
                ctypes.c_int32(cols), ctypes.c_int(1), ctypes.c_char_p(text), None,
                ctypes.byref(dataset)))  # fmt: skip
            names = [n.encode() for n in feature_names]
            c_names = (ctypes.c_char_p * len(names))(*names)
            _call(lib, lib.LGBM_DatasetSetFeatureNames(dataset, c_names, ctypes.c_int(len(names))))
            _call(lib, lib.LGBM_DatasetSetField(
                dataset, ctypes.c_char_p(b"label"), label.ctypes.data_as(ctypes.c_void_p),
                ctypes.c_int(len(label)), ctypes.c_int(_DTYPE_FLOAT32)))  # fmt: skip
            _call(
                lib, lib.LGBM_BoosterCreate(dataset, ctypes.c_char_p(text), ctypes.byref(booster))
            )
            finished = ctypes.c_int(0)
            _call(lib, lib.LGBM_BoosterUpdateOneIter(booster, ctypes.byref(finished)))
        finally:
            if booster.value:
                lib.LGBM_BoosterFree(booster)
            if dataset.value:
                lib.LGBM_DatasetFree(dataset)
