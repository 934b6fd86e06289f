"""A sweep's results: the trial records engines emit, the ranking ``sweep best`` applies
(``rank_by``), and the files ``RunDir`` writes from them (results.csv, best_config.json).

Below report/ and engine-neutral: engines, the run layer and ``RunDir`` import it;
it imports none of them.
"""
