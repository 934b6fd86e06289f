"""Snapshot text: the document json.dumps gives, each trial's entry encoded once per change."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from ray.tune.utils.serialization import TuneFunctionEncoder

from raysweep._raycompat.snapshot_text import SnapshotText


class CountingEncoder(TuneFunctionEncoder):
    """Ray's encoder, counting the documents it encodes."""

    calls: ClassVar[int] = 0

    def encode(self, o: Any) -> str:
        CountingEncoder.calls += 1
        return super().encode(o)


def entry(trial: int, iteration: int) -> tuple[str, str]:
    """A trial's (state, metadata) pair as Ray caches it: two JSON strings."""
    state = json.dumps({"trial_id": f"t{trial}", "config": {"x": trial / 7}}, indent=2)
    return state, json.dumps({"last_result": {"training_iteration": iteration, "name": 'a"b'}})


def test_the_text_is_what_json_dumps_gives() -> None:
    trials = {f"t{i}": entry(i, 1) for i in range(5)}
    runner, stats = {"_session_str": "2026", "nested": [1, 2.5, None]}, {"start_time": 1.25}
    expected = json.dumps(
        {"trial_data": list(trials.values()), "runner_data": runner, "stats": stats},
        cls=TuneFunctionEncoder,
    )
    text = SnapshotText()
    assert b"".join(text.encode(trials, runner, stats, encoder=TuneFunctionEncoder)) == (
        expected.encode()
    )
    empty = json.dumps({"trial_data": [], "runner_data": runner, "stats": stats})
    assert b"".join(text.encode({}, runner, stats)) == empty.encode()
    extra = {"raysweep_searcher": {"a.pkl": "gASVAA=="}, "n": [1]}
    more = json.dumps({"trial_data": [], "runner_data": runner, "stats": stats, **extra})
    assert b"".join(text.encode({}, runner, stats, extra=extra)) == more.encode()


def test_only_entries_ray_replaced_are_encoded_again() -> None:
    trials = {f"t{i}": entry(i, 1) for i in range(4)}
    text = SnapshotText()
    text.encode(trials, {}, {}, encoder=CountingEncoder)
    CountingEncoder.calls = 0
    trials["t2"] = entry(2, 9)  # Ray re-cached one trial's state
    trials["t4"] = entry(4, 1)  # and a new trial started
    result = json.loads(b"".join(text.encode(trials, {}, {}, encoder=CountingEncoder)))
    assert CountingEncoder.calls == 2 + 2  # the two entries, runner data and stats
    assert [list(e) for e in trials.values()] == result["trial_data"]
    assert json.loads(result["trial_data"][2][1])["last_result"]["training_iteration"] == 9


def test_cleared_text_encodes_everything_again() -> None:
    trials = {"t0": entry(0, 1)}
    text = SnapshotText()
    text.encode(trials, {}, {}, encoder=CountingEncoder)
    text.clear()
    CountingEncoder.calls = 0
    text.encode(trials, {}, {}, encoder=CountingEncoder)
    assert CountingEncoder.calls == 3
