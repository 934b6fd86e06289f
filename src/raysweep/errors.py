"""Exception hierarchy. Each error maps to a CLI exit code."""

from __future__ import annotations

INTERRUPTED = 130  # the exit code of a command Ctrl-C or SIGTERM ended (a run can be resumed)


class SweepError(Exception):
    """Base class of every raysweep error; exit code 1 unless a subclass says otherwise."""

    exit_code = 1


class ConfigError(SweepError):
    """The sweep.json or a command-line flag is invalid. Nothing was started."""

    exit_code = 2


class ResumeError(SweepError):
    """A run directory cannot be resumed as asked. Nothing was modified."""

    exit_code = 2


class NoSuchRunError(SweepError):
    """The run directory a command names does not exist. Nothing was read or written."""

    exit_code = 2


class LockError(SweepError):
    """Another live process is driving the same run directory."""

    exit_code = 2


class GPUError(SweepError):
    """The GPUs asked for do not exist or cannot be used."""

    exit_code = 2


class RunDirExistsError(SweepError):
    """The run directory already exists and would be overwritten."""

    exit_code = 2


class TrainableError(SweepError):
    """A trainable cannot be imported or called."""

    exit_code = 2


class SweepFailed(SweepError):
    """The sweep ran but no trial succeeded."""

    exit_code = 1


class MetricNotReported(SweepFailed):
    """A trial reported a result without the metric the sweep ranks by (exit 1)."""
