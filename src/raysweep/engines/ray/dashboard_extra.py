"""Whether Ray's dashboard can start here, decided before anything is written.

The dashboard needs Ray's ``default`` extra (aiohttp, grpc, OpenTelemetry, ...).
Without it ``ray.init(include_dashboard=True)`` raises a bare ``Exception``
("Cannot include dashboard with missing packages.") after the run directory
exists. The dashboard is optional, so it must never cost a run: by default a
local Ray starts without it and says so in one line; only an explicit
``--dashboard`` makes the missing extra an error (exit 2), naming the install.

The check is Ray's own (importing ``ray.dashboard.optional_deps``), made
before ``ray.init``; it costs nothing extra, since a local Ray's start imports the
same modules in this process when it starts the dashboard.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from raysweep.errors import ConfigError

INSTALL = "pip install 'ray[default]'"
OPTIONAL_DEPS = "ray.dashboard.optional_deps"  # what Ray imports to decide


@dataclass(frozen=True)
class DashboardChoice:
    """Whether a local Ray starts its dashboard, and the note that says why not."""

    include: bool
    note: str | None = None


def missing_dashboard_module() -> str | None:
    """The first module of Ray's ``default`` extra that is missing (None: all there)."""
    try:
        importlib.import_module(OPTIONAL_DEPS)
    except ImportError as error:
        name = error.name or ""
        if name == OPTIONAL_DEPS or name.startswith("ray."):
            return None  # not the extra: a Ray without that module decides itself
        return name or str(error)
    return None


def choose_dashboard(requested: bool | None, address: str | None) -> DashboardChoice:
    """The dashboard choice for ``--dashboard`` (True), ``--no-dashboard`` (False) or neither.

    A cluster (``address``) runs its own dashboard: nothing to decide here.
    ConfigError when the dashboard was asked for explicitly and cannot start.
    """
    if requested is False or address:
        return DashboardChoice(False)
    missing = missing_dashboard_module()
    if missing is None:
        return DashboardChoice(True)
    if requested:
        raise ConfigError(
            f"--dashboard: Ray's dashboard needs Ray's 'default' extra, which is not "
            f"installed (no module {missing!r}); install it with: {INSTALL}, "
            "or run with --no-dashboard"
        )
    return DashboardChoice(
        False,
        f"note: no Ray dashboard: Ray's 'default' extra is not installed "
        f"(no module {missing!r}); {INSTALL} adds it",
    )
