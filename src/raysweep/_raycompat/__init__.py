"""Every use of Ray's private API, one module per concern, checked at start-up.

``declared.TARGETS`` declares each private name a module here patches or reads
(fields included); ``check_ray()`` resolves those of the installed release and
the engine about to run before a run writes anything. No module outside this
package imports an underscore-named Ray module or name, or uses a private
attribute of a Ray object (``tests/test_architecture.py``,
``tests/_raycompat/test_private_names.py``). ``RAYSWEEP_RAY_PATCHES=off``
turns the performance-only patches off (``switch.py``).
"""

from raysweep._raycompat.startup_check import RAY_TESTED, RayCompatError, check_ray

__all__ = ["RAY_TESTED", "RayCompatError", "check_ray"]
