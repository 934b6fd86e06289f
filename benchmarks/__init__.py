"""raysweep benchmarks: ``sweep run`` against raw Ray Tune scripts, side by side.

Run everything with ``python -m benchmarks.run`` (``make bench``), a CI-sized
smoke version with ``--quick``, or one benchmark alone (``python -m
benchmarks.overhead``). Results go to ``benchmarks/results/*.json`` and the
figures to ``benchmarks/BENCHMARKS.md``.

Nothing here is imported by raysweep itself, and the raw Ray Tune scripts never
import raysweep.
"""
