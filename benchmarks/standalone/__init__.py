"""Standalone benchmarks: scripts with their own flags, run by name and never by the suite.

Each module here is registered with ``suite=False`` in ``benchmarks/registry.py``
and its entry point is ``main(argv)``: ``python -m benchmarks.run NAME [its flags]``.
They take longer, need another source tree or answer one question once, so ``make
bench`` leaves them out; they print their figures, and the last ones taken are
pasted into BENCHMARKS.md ("Standalone benchmarks") by hand. Some build on a suite
benchmark's workload (``benchmarks.suite``); the suite, the harness and the
workloads never import them.
"""
