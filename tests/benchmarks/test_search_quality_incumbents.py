"""Each peer is scored by the configuration its own API returns (search_quality_peers.py).

The peers other than Optuna live in their own virtual environment (``.venv-peers``, which
``make bench`` installs): the checks run there, on short runs of Hartmann-3, and are
skipped where it is absent. Optuna's rule is checked in test_search_quality.py.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PEERS_PYTHON = Path(os.environ.get("RAYSWEEP_PEERS_PYTHON") or REPO / ".venv-peers/bin/python")
CHECKS = """
from benchmarks.harness.regret import regret_at
from benchmarks.workloads.search_quality_peers import run

def rows(peer, budget):
    return run("mfh3", peer, seed=1, budget=budget, workers=2)["observations"]

def observed(run, i):  # the best value told so far, at any fidelity (rows told in order)
    return regret_at(run[: i + 1], float("inf"))

# DEHB's inc_config: the best fitness told at any fidelity (dehb.py: _update_incumbents)
dehb = rows("dehb", 120)
assert len({r[4] for r in dehb}) > 1
assert all(r[5] == observed(dehb, i) for i, r in enumerate(dehb)), "dehb"
# Syne Tune: its best result at any fidelity (ExperimentResult.best_config)
syne = rows("syne-asha", 120)
assert all(r[5] == observed(syne, i) for i, r in enumerate(syne)), "syne"
# hpbandster's get_incumbent_id: the best loss on the maximum budget, None before one
hp = rows("hpbandster-bohb", 200)
first = next(i for i, r in enumerate(hp) if r[4] == 27)
assert all(r[5] is None for r in hp[:first]) and any(r[4] < 27 for r in hp[:first])
for i, r in enumerate(hp[first:], first):
    best = min((q for q in hp[: i + 1] if q[4] == 27), key=lambda q: q[2])
    assert r[5] == best[3], ("hpbandster", i)
# SMAC3's intensifier incumbent: named from the first result on, a configuration run
smac = rows("smac-mf", 120)
assert all(r[5] is not None for r in smac) and {r[5] for r in smac} <= {r[3] for r in smac}
bo = rows("smac-bo", 108)  # every run at full fidelity: the best cost told
assert all(r[5] == observed(bo, i) for i, r in enumerate(bo)), "smac-bo"
print("ok")
"""


@pytest.mark.skipif(not PEERS_PYTHON.is_file(), reason="no peers' environment (make bench)")
def test_each_peer_returns_its_own_apis_incumbent() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([str(PEERS_PYTHON), "-c", CHECKS], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600, check=False)  # fmt: skip
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stdout + proc.stderr
