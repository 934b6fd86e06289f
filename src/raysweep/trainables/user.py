"""User trainables: ``package.module:function``, a plain Ray Tune function trainable."""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable
from typing import Any

from raysweep.errors import TrainableError


def load_user_trainable(ref: str) -> Callable[[dict[str, Any]], Any]:
    """Import ``ref`` ("pkg.module:function") and check it takes one config argument.

    The current directory is importable, as it is for ``python -m``.
    """
    module_name, sep, func_name = ref.partition(":")
    if not sep or not module_name or not func_name:
        raise TrainableError(f"trainable {ref!r}: expected 'package.module:function'")
    if "" not in sys.path:
        sys.path.insert(0, "")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise TrainableError(
            f"trainable {ref!r}: cannot import module {module_name!r}: {type(exc).__name__}: {exc}"
        ) from None
    func = getattr(module, func_name, None)
    if func is None:
        public = sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_"))
        raise TrainableError(
            f"trainable {ref!r}: module {module_name!r} has no function {func_name!r}"
            + (f"; it has: {', '.join(public[:12])}" if public else "")
        )
    if not callable(func):
        raise TrainableError(f"trainable {ref!r}: {func_name!r} is not callable")
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return func
    required = [
        p
        for p in params.values()
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    if len(required) > 1 or (not params):
        raise TrainableError(
            f"trainable {ref!r}: must take exactly one argument (the config dict), "
            f"got signature {func_name}{inspect.signature(func)}"
        )
    return func
