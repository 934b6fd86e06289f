"""Run directories written by earlier releases resume: every raysweep name Ray pickled into
their ``tune/tuner.pkl`` (by module path) still imports from that path (raysweep/moved.py).

The pairs below were read (``pickletools``) from the tuner.pkl of an mf-tpe + ASHA sweep
written before the searcher builder left ``tuner/`` and the engines moved under
``engines/``; resuming that run after the first move failed with "tuner.pkl is corrupt (No
module named 'raysweep.tuner.search_alg')".
"""

from __future__ import annotations

import importlib
import pickle
import subprocess
import sys

import pytest

from raysweep.moved import new_name

PICKLED = [
    ("raysweep._raycompat.asha_rungs", "RuleBracket"),
    ("raysweep._raycompat.entry_encoder", "EntryEncoder"),
    ("raysweep._raycompat.interrupt", "StopCallback"),
    ("raysweep._raycompat.trial_rows", "TrialRowsLogger"),
    ("raysweep.driver.lost_nodes", "LostNodeCallback"),
    ("raysweep.driver.progress", "ProgressCallback"),
    ("raysweep.run.live_best", "LiveBest"),
    ("raysweep.run.returned", "ReturnedTrials"),
    ("raysweep.schedulers.asha", "SweepASHAScheduler"),
    ("raysweep.search.indexed", "IndexedSearcher"),
    ("raysweep.search.mftpe", "MultiFidelityTPE"),
    ("raysweep.tuner.build", "_trial_name"),
    ("raysweep.tuner.metric_check", "MetricCheck"),
    ("raysweep.tuner.search_alg", "SweepSearch"),
]


@pytest.mark.parametrize(("module", "name"), PICKLED)
def test_a_name_an_earlier_tuner_pkl_holds_unpickles_as_the_name_now(
    module: str, name: str
) -> None:
    """pickle finds the name by its old path, and gets the object the code uses now."""
    now = importlib.import_module(new_name(module) or module)
    reference = f"c{module}\n{name}\n.".encode()  # protocol 0: a global by module path
    assert pickle.loads(reference) is getattr(now, name)


def test_old_paths_map_by_their_longest_moved_prefix() -> None:
    assert new_name("raysweep.driver.progress") == "raysweep.engines.ray.progress"
    assert new_name("raysweep.local.trial") == "raysweep.engines.local.trial"
    assert new_name("raysweep.tuner.build") == "raysweep.engines.ray.tuner"
    assert new_name("raysweep.tuner.metric_check") == "raysweep.engines.ray.metric_check"
    assert new_name("raysweep.tuner.search_alg") == "raysweep.search.build"
    assert new_name("raysweep.search.build") is None
    assert new_name("raysweep.localities") is None  # a prefix of a word is not a package


def test_an_old_path_is_the_moved_module_itself_in_a_fresh_process() -> None:
    """Imported first by its old path, a module is loaded once, under its own name and spec
    (no second copy whose classes differ)."""
    code = (
        "import sys, raysweep.driver.progress as old\n"
        "import raysweep.engines.ray.progress as new\n"
        "assert old is new, (old, new)\n"
        "assert new.__spec__.name == 'raysweep.engines.ray.progress', new.__spec__\n"
        "assert sys.modules['raysweep.driver.progress'] is new\n"
        "assert [n for n, m in list(sys.modules.items())"
        " if getattr(m, '__file__', None) == new.__file__ and m is not new] == []\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
