"""Where a run directory written before the searcher builder moved to ``search/build.py``
finds its searcher: Ray pickles the search algorithm into ``tune/tuner.pkl`` by module
path, and such a run names ``raysweep.tuner.search_alg.SweepSearch``."""

from raysweep.search.build import SweepSearch

__all__ = ["SweepSearch"]
