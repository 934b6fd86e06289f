"""The benchmark harness: timing, repeats, subprocess launches, JSON results, BENCHMARKS.md.

``common`` (statistics, machine facts, result files; it imports no other harness
module), ``cli`` (the flags every benchmark shares), ``launch`` (start ``sweep
run`` or a raw Ray Tune script, time it from outside, repeat the launches and put
them in a result), ``probe`` (``sweep`` with clocks around its stages),
``markdown`` (splice results into BENCHMARKS.md) and ``regret`` (the
search-quality benchmark's regret tables). Nothing here is a benchmark.
"""
