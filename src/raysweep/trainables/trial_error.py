"""A trial's exception, kept whole on its way from the trial's worker to the run's records.

Ray Tune copies the exception a trainable raises (``copy.copy``), pickles it to
the driver and unpickles it there. Exceptions that do not survive that — a
class whose ``__init__`` takes two arguments (rebuilt from ``args`` with one), a
C extension's (``_catboost.CatBoostError``), anything holding an unpicklable
object — came out as "TypeError: __init__() missing 1 required positional
argument" or a "Failed to deserialize exception" that crashed the driver.

``TrialError`` carries the original as text: its type name and message on the
first line, its full traceback (chained exceptions included) after it, so Ray's
error file, results.json, report.txt and ``sweep status`` show what happened.
It takes one string argument, so it copies, pickles and unpickles anywhere.
"""

from __future__ import annotations

import traceback

# What Ray Tune raises inside a function trainable to end it without an error
# (RunnerThread treats StopIteration and SystemExit(0) as a normal end), and
# what must never be turned into a trial's error.
PASS_THROUGH: tuple[type[BaseException], ...] = (
    StopIteration,
    SystemExit,
    KeyboardInterrupt,
    GeneratorExit,
)


class TrialError(Exception):
    """A trial's exception as text: ``TypeName: message``, a blank line, the traceback."""

    def __init__(self, text: str) -> None:
        super().__init__(text)

    @property
    def summary(self) -> str:
        """The first line: the original type name and message."""
        return str(self).split("\n", 1)[0]


def whole_error(exc: BaseException) -> TrialError:
    """``exc`` as a TrialError: type name, message and traceback, whatever ``exc`` is."""
    if isinstance(exc, TrialError):
        return exc
    name = type(exc).__qualname__
    message = _safe_str(exc)
    try:
        trace = "".join(traceback.format_exception(exc)).rstrip()
    except Exception as failure:  # a broken __str__ or __repr__ on the way
        trace = f"(traceback unavailable: {type(failure).__name__})"
    summary = f"{name}: {message}" if message else name
    return TrialError(f"{summary}\n\n{trace}")


def _safe_str(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return f"<unprintable {type(exc).__qualname__}>"
