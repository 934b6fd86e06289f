"""A trial's exception is kept whole: type name, message and traceback, and it always travels."""

from __future__ import annotations

import copy
import pickle
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from raysweep.trainables.trial_error import TrialError, whole_error
from raysweep.trainables.wrapper import TrialPlan, make_trainable


class BadError(Exception):
    def __init__(self, a: int, b: int) -> None:
        super().__init__(f"bad {a} {b}")


class HoldsALock(Exception):
    def __init__(self) -> None:
        super().__init__("cannot pickle me")
        self.lock = threading.Lock()


def raised(exc: BaseException) -> BaseException:
    try:
        raise exc
    except BaseException as caught:
        return caught


def catboost_error() -> BaseException:
    from catboost import CatBoost, Pool

    try:
        CatBoost({"depht": 3, "iterations": 1, "verbose": False}).fit(Pool([[0.0], [1.0]], [0, 1]))
    except Exception as exc:
        return exc
    raise AssertionError("CatBoost accepted an unknown option")


@pytest.mark.parametrize(
    ("make", "summary"),
    [
        (lambda: raised(BadError(1, 2)), "BadError: bad 1 2"),
        (lambda: raised(HoldsALock()), "HoldsALock: cannot pickle me"),
        (catboost_error, "CatBoostError: "),
        (lambda: raised(ValueError("plain")), "ValueError: plain"),
    ],
    ids=["two-argument-init", "unpicklable", "c-extension", "builtin"],
)
def test_any_exception_survives_copy_and_pickle(make: Any, summary: str) -> None:
    original = make()
    error = whole_error(original)
    for travelled in (copy.copy(error), pickle.loads(pickle.dumps(error))):
        assert isinstance(travelled, TrialError)
        assert str(travelled) == str(error)
        assert travelled.summary.startswith(summary)
    text = str(error)
    assert "Traceback (most recent call last):" in text
    assert text.rstrip().endswith(f"{type(original).__qualname__}: {original}")


def test_chained_causes_are_kept() -> None:
    try:
        try:
            raise KeyError("inner")
        except KeyError as inner:
            raise BadError(3, 4) from inner
    except BadError as exc:
        text = str(whole_error(exc))
    assert "KeyError: 'inner'" in text and "direct cause" in text
    assert text.startswith("BadError: bad 3 4\n")


def write_module(tmp_path: Path, body: str) -> str:
    name = f"trial_error_mod_{abs(hash(body)) % 10**8}"
    (tmp_path / f"{name}.py").write_text(body)
    return name


def test_the_wrapper_raises_a_trial_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    module = write_module(
        tmp_path,
        "class BadError(Exception):\n"
        "    def __init__(self, a, b):\n"
        "        super().__init__(f'bad {a} {b}')\n\n"
        "def fit(config):\n"
        "    raise BadError(1, 2)\n",
    )
    trial = make_trainable(TrialPlan(f"{module}:fit", 1, "loss", "min"))
    with pytest.raises(TrialError) as info:
        trial({"x": 1})
    assert info.value.summary == "BadError: bad 1 2"
    assert info.value.__cause__ is None and info.value.__suppress_context__
    assert f"{module}.BadError: bad 1 2" in str(info.value)
    sys.modules.pop(module, None)


@pytest.mark.parametrize(
    ("kind", "exc"),
    [(StopIteration, "StopIteration()"), (SystemExit, "SystemExit(0)"),
     (KeyboardInterrupt, "KeyboardInterrupt()")],
)  # fmt: skip
def test_ray_tunes_ways_of_ending_a_trial_pass_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: type[BaseException], exc: str
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    module = write_module(tmp_path, f"def fit(config):\n    raise {exc}\n")
    trial = make_trainable(TrialPlan(f"{module}:fit", 1, "loss", "min"))
    with pytest.raises(kind):
        trial({})
    sys.modules.pop(module, None)
