"""raysweep benchmarks: ``sweep run`` against raw Ray Tune scripts and peers, side by side.

Every benchmark is one module, registered once in ``benchmarks/registry.py``
(``python -m benchmarks.run --list`` prints the table), and runs through
``benchmarks/run.py``: ``python -m benchmarks.run`` (``make bench``) runs the
suite, ``--quick`` its CI-sized smoke version, and ``python -m benchmarks.run NAME
[flags]`` any one benchmark alone with its own flags. ``benchmarks/suite/`` holds
the suite's modules, ``benchmarks/standalone/`` the scripts run only by name,
``benchmarks/harness/`` the shared machinery, ``benchmarks/workloads/`` what the
benchmarks run. Results go to ``benchmarks/results/*.json`` and the figures to
``benchmarks/BENCHMARKS.md``.

Nothing here is imported by raysweep itself, and the raw Ray Tune scripts never
import raysweep.
"""
