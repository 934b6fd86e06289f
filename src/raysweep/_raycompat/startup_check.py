"""Every piece of Ray's private API raysweep relies on, checked at start-up.

``declared.TARGETS`` names each private name a patch replaces or reads, what it
must be, and the raysweep module that uses it (``private_name.py`` says how one is
checked). :func:`check_ray` resolves those of the installed Ray's release and
the engine about to run before ``sweep run``/``resume`` writes anything: a Ray
whose internals moved is refused with exit 2 rather than quietly losing crash
recovery or the speed-ups (docs/ray-compat.md lists why each one exists).
"""

from __future__ import annotations

import importlib.metadata

from raysweep._raycompat.declared import TARGETS
from raysweep._raycompat.private_name import Target, parse_version, problem, resolve
from raysweep._raycompat.switch import PERF_PATCHES, perf_patches_on
from raysweep.errors import SweepError

__all__ = [
    "RAY_TESTED",
    "TARGETS",
    "RayCompatError",
    "Target",
    "check_ray",
    "problem",
    "required_targets",
    "resolve",
    "version_tested",
]

# The Ray releases raysweep is tested with: the last three minors (pyproject.toml
# declares the same range; `make test-ray-matrix` runs the ones not pinned).
RAY_TESTED = ">=2.58.1,<2.61"
_LOWEST, _BELOW = (2, 58, 1), (2, 61, 0)


class RayCompatError(SweepError):
    """The installed Ray's internals differ from the ones raysweep was tested with."""

    exit_code = 2


def ray_version() -> str:
    """The installed Ray's version ("not installed" when there is none)."""
    try:
        return importlib.metadata.version("ray")
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def version_tested(version: str) -> bool:
    """Whether ``version`` lies in :data:`RAY_TESTED`."""
    parts = parse_version(version)
    return parts is not None and _LOWEST <= parts < _BELOW


def required_targets(version: str, engine: str = "ray", perf_patches: bool = True) -> list[Target]:
    """The targets Ray ``version`` must have for ``engine``.

    Without the performance-only patches (``RAYSWEEP_RAY_PATCHES=off``) their
    targets are not needed.
    """
    parsed = parse_version(version)
    return [
        t
        for t in TARGETS
        if engine in t.engines
        and t.applies_to(parsed)
        and (perf_patches or t.used_by not in PERF_PATCHES)
    ]


def check_ray(engine: str = "ray") -> list[str]:
    """RayCompatError when a target ``engine`` needs does not match; warnings for an
    untested version. ``engine``: ``"ray"`` (Ray Tune runs the trials) or ``"local"``."""
    version = ray_version()
    perf = perf_patches_on()  # ConfigError (exit 2) for a value it does not know
    problems = [p for p in (problem(t) for t in required_targets(version, engine, perf)) if p]
    if problems:
        raise RayCompatError(
            f"Ray {version} is installed, but raysweep supports ray{RAY_TESTED} (the range it "
            f"is tested with), and this Ray's internals differ:\n  "
            + "\n  ".join(problems)
            + f"\nInstall a supported Ray: pip install 'ray[tune,default]{RAY_TESTED}'. "
            "Nothing was started or written."
        )
    if not version_tested(version):
        return [
            f"warning: Ray {version} is outside the tested range ray{RAY_TESTED}; every "
            "internal raysweep relies on was found, but it is untested"
        ]
    return []
