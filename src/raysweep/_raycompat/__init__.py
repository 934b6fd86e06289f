"""Every use of Ray's private API, one module per concern, checked at start-up.

``targets.TARGETS`` declares each private name a module here patches or reads;
``check_ray()`` resolves them on the installed Ray before a run writes
anything. No module outside this package imports an underscore-named Ray
module or name (``tests/test_architecture.py`` checks it).
"""

from raysweep._raycompat.targets import RAY_TESTED, RayCompatError, check_ray

__all__ = ["RAY_TESTED", "RayCompatError", "check_ray"]
