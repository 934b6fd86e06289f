"""What the benchmarks run: trainables, the raw Ray Tune baseline, the peers' programs, problems.

Modules here are imported by trial workers (``benchmarks.workloads.trainables:noop``)
or started as their own processes (``raw_tune``, ``peer_optuna_plain``,
``search_quality_peers`` in the peers' environment); none measures anything.
"""
