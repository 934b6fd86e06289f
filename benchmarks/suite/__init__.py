"""The suite: the benchmarks ``python -m benchmarks.run`` (``make bench``) runs together.

Each module here is registered with ``suite=True`` in ``benchmarks/registry.py`` and
has a ``run(quick, repeats, trials)`` that returns its result; the runner stamps the
result with the date, machine and versions, writes it to ``benchmarks/results/`` and
rewrites the module's ``<!-- bench:NAME -->`` section of BENCHMARKS.md and its rows
of the targets table. ``python -m benchmarks.run NAME [flags]`` runs one alone with
its own flags.

The benchmarks are split by how they run, not by topic: a topic spans both folders
(the overhead benchmark here, what the dashboard costs at start-up on the same
no-op sweep in ``benchmarks/standalone/``), while what a folder's modules share is
the contract above. Nothing here imports a standalone benchmark.
"""
