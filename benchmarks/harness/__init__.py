"""The benchmark harness: timing, repeats, subprocess launches, JSON results, BENCHMARKS.md.

``common`` (statistics, machine facts, result files), ``cli`` (the flags every
benchmark shares), ``launch`` (start ``sweep run`` or a raw Ray Tune script and
time it from outside), ``probe`` (``sweep`` with clocks around its stages),
``markdown`` (splice results into BENCHMARKS.md) and ``regret`` (the
search-quality benchmark's regret tables). Nothing here is a benchmark.
"""
