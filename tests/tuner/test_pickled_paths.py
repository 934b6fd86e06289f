"""Run directories written by earlier releases resume: every raysweep name Ray pickled into
their ``tune/tuner.pkl`` (by module path) still imports from that path.

The pairs below were read (``pickletools``) from the tuner.pkl of an mf-tpe + ASHA sweep
written before the searcher builder left ``tuner/``; resuming that run after the move
failed with "tuner.pkl is corrupt (No module named 'raysweep.tuner.search_alg')". A
module moved or a class renamed must leave its old path importable.
"""

from __future__ import annotations

import importlib

import pytest

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
def test_a_name_an_earlier_tuner_pkl_holds_still_imports(module: str, name: str) -> None:
    assert hasattr(importlib.import_module(module), name)


def test_the_moved_searcher_is_the_same_class() -> None:
    from raysweep.search.build import SweepSearch
    from raysweep.tuner.search_alg import SweepSearch as Pickled

    assert Pickled is SweepSearch
