"""Optional heavy dependencies: one table of extras, one helper, one message.

torch, LightGBM, XGBoost and CatBoost are extras (``pip install 'raysweep[lightgbm]'``,
``[torch]``, ``[xgboost]``, ``[catboost]``, ``[all]``), so a user who tunes only
LightGBM does not download torch and its CUDA wheels. Code that needs one imports
it lazily, through this module, in the style of ``optuna/_imports.py``::

    with try_import("lightgbm") as imported:
        import lightgbm as lgb
    imported.check()  # MissingExtraError naming the pip install that fixes it

or, before anything starts, ``require("torch", "trainable 'torch_mlp'")``, which
only looks the package up (no import) and so costs microseconds.
"""

from __future__ import annotations

import importlib.util
from types import TracebackType

from raysweep.errors import ConfigError

# import name -> the extra that installs it
EXTRAS: dict[str, str] = {
    "torch": "torch",
    "lightgbm": "lightgbm",
    "xgboost": "xgboost",
    "catboost": "catboost",
    "tensorboardX": "tensorboard",
    "mlflow": "mlflow",
}


class MissingExtraError(ConfigError):
    """An optional dependency is not installed (exit 2: nothing was started)."""


def install_hint(module: str) -> str:
    """The command that installs ``module``: ``pip install 'raysweep[<extra>]'``."""
    extra = EXTRAS.get(module)
    return f"pip install 'raysweep[{extra}]'" if extra else f"pip install {module}"


def missing_message(module: str, feature: str) -> str:
    """The one message for a missing optional dependency."""
    return (
        f"{feature} needs {module}, which is not installed; install it with: {install_hint(module)}"
    )


def is_installed(module: str) -> bool:
    """Whether ``module`` can be imported, without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def require(module: str, feature: str) -> None:
    """MissingExtraError naming the ``pip install`` for ``feature`` unless ``module`` exists."""
    if not is_installed(module):
        raise MissingExtraError(missing_message(module, feature))


class _DeferredImport:
    """Catches the ImportError of an optional import; ``check()`` raises it as MissingExtraError."""

    def __init__(self, module: str, feature: str) -> None:
        self.module, self.feature = module, feature
        self._error: ImportError | None = None

    def __enter__(self) -> _DeferredImport:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool:
        if isinstance(exc_value, ImportError):
            self._error = exc_value
            return True
        return False

    def is_successful(self) -> bool:
        """Whether the imports inside the block succeeded."""
        return self._error is None

    def check(self) -> None:
        """Raise MissingExtraError (from the original ImportError) if an import failed."""
        if self._error is not None:
            message = f"{missing_message(self.module, self.feature)} ({self._error})"
            raise MissingExtraError(message) from self._error


def try_import(module: str, feature: str | None = None) -> _DeferredImport:
    """A context manager that defers the ImportError of ``module`` until ``check()``."""
    return _DeferredImport(module, feature or f"this feature ({module})")
