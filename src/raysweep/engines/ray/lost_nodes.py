"""Name every trial a dead node took with it: in the log, trials.jsonl and so results.json.

Ray Tune retries such a trial from its last checkpoint on a node that is alive
(``_raycompat/node_loss.py``); this callback says so when it happens, and
appends a ``node_lost`` event that ``sweep status`` and results.json read.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import IO, Any

from ray import tune

from raysweep._raycompat.node_loss import take_loss
from raysweep.results.records import NODE_LOST_EVENT
from raysweep.search.indexed import INDEX_KEY


class LostNodeCallback(tune.Callback):
    """Reports each trial retried because its node died."""

    def __init__(self, events_path: Path, out: IO[str]) -> None:
        self.events_path = events_path  # RunDir.events_path (trials.jsonl)
        self.out = out

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "out": None}  # Ray pickles the run config; streams stay

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.out = sys.stdout

    def on_trial_recover(self, iteration: int, trials: list[Any], trial: Any, **info: Any) -> None:
        node = take_loss(trial.trial_id)
        if node is None:
            return
        done = int((trial.last_result or {}).get("training_iteration") or 0)
        index = (trial.config or {}).get(INDEX_KEY)
        record = {
            "event": NODE_LOST_EVENT, "trial_id": trial.trial_id, "index": index,
            "t": time.time(), "node_id": node, "iterations": done,
        }  # fmt: skip
        with self.events_path.open("a", encoding="utf-8") as events:
            events.write(json.dumps(record) + "\n")
        print(
            f"node lost: node {node[:12]} died while trial {trial.trial_id} (index {index}) "
            f"ran there, after iteration {done}; the trial continues from its last checkpoint "
            "on a node that is alive (a lost node does not count against max_failures)",
            file=self.out,
            flush=True,
        )
