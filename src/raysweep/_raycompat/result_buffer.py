"""Ray Tune's result buffering, set in the order this Ray's controller passes it on.

Ray Tune reads ``TUNE_RESULT_BUFFER_LENGTH`` (an int) and
``TUNE_RESULT_BUFFER_MIN_TIME_S`` into ``(buffer_length, buffer_time_s)`` and,
when the length is above 1, asks the trial actor for
``Trainable.train_buffered(buffer_time_s, max_buffer_length)``. Ray 2.60's
``TuneController._schedule_trial_train`` passes the two the other way round
(``args = (buffer_length, buffer_time_s)``): set as documented, a buffer of 100
results over 2 s becomes 100 s and at most 2 results.

:func:`buffer_env` reads which order the installed Ray uses and returns the
variables that give ``results`` reports per batch over at most ``seconds``: crossed
for Ray 2.60 (the seconds then must be a whole number above 1, since Ray
parses the length as an int), as documented once Ray passes them in order, and
buffering off when the call's shape is not one of the two. The crossed order is
a declared target (``_raycompat/declared.py``): Ray 2.58.1, 2.59.0 and 2.60.0 all
pass them crossed, and a release that changes it is refused at start-up until it
is declared (or runs with ``RAYSWEEP_RAY_PATCHES=off``: no buffering).
"""

from __future__ import annotations

import inspect
from typing import Literal

from raysweep._raycompat.switch import perf_patch_applies

LENGTH_ENV = "TUNE_RESULT_BUFFER_LENGTH"
TIME_ENV = "TUNE_RESULT_BUFFER_MIN_TIME_S"

Order = Literal["crossed", "documented", "unknown"]
CROSSED_BUFFER_ARGS = "args = (buffer_length, buffer_time_s)"  # a declared target
_DOCUMENTED = "args = (buffer_time_s, buffer_length)"


def argument_order() -> Order:
    """How this Ray's controller passes the buffer settings to ``train_buffered``."""
    try:
        from ray.tune.execution.tune_controller import TuneController
        from ray.tune.trainable.trainable import Trainable

        source = inspect.getsource(TuneController._schedule_trial_train)
        params = tuple(inspect.signature(Trainable.train_buffered).parameters)
    except (ImportError, AttributeError, OSError, TypeError):
        return "unknown"
    if params[:3] != ("self", "buffer_time_s", "max_buffer_length"):
        return "unknown"
    if CROSSED_BUFFER_ARGS in source:
        return "crossed"
    if _DOCUMENTED in source:
        return "documented"
    return "unknown"


def buffer_env(results: int, seconds: int) -> dict[str, str]:
    """Ray Tune's variables for batches of up to ``results`` reports over ``seconds``.

    ``{}`` (Ray's default: no buffering) when the installed Ray's order is unknown, or
    with the performance patches switched off (``_raycompat/switch.py``).
    """
    if results < 2 or seconds < 2:
        raise ValueError(f"a buffer needs results >= 2 and seconds >= 2 (got {results}, {seconds})")
    order = argument_order() if perf_patch_applies() else "unknown"
    if order == "crossed":
        return {LENGTH_ENV: str(seconds), TIME_ENV: str(results)}
    if order == "documented":
        return {LENGTH_ENV: str(results), TIME_ENV: str(seconds)}
    return {}
