"""Ended trials' snapshot entries are encoded one loop turn after they end, not at the snapshot."""

from __future__ import annotations

from ray.tune.experiment import Trial

from raysweep._raycompat.entry_encoder import EntryEncoder


def running_trial() -> Trial:
    trial = Trial("noop", config={"x": 1}, stub=True)
    trial.set_status(Trial.RUNNING)
    return trial


def test_an_ended_trial_is_encoded_at_the_next_turn_with_its_final_status() -> None:
    done, failed, other = running_trial(), running_trial(), running_trial()
    encoder = EntryEncoder()
    encoder.on_trial_complete(iteration=1, trials=[], trial=done)
    encoder.on_trial_error(iteration=1, trials=[], trial=failed)
    done.set_status(Trial.TERMINATED)  # Ray sets the status after the callbacks
    failed.set_status(Trial.ERROR)
    assert done._state_json is None and failed._state_json is None
    encoder.on_step_end(iteration=1, trials=[])
    assert '"status": "TERMINATED"' in done.get_json_state()[0]
    assert done._state_json is not None and failed._state_json is not None
    assert '"status": "ERROR"' in failed._state_json
    assert other._state_json is None  # only trials that ended


def test_each_ended_trial_is_encoded_once() -> None:
    trial = running_trial()
    encoder = EntryEncoder()
    encoder.on_trial_complete(iteration=1, trials=[], trial=trial)
    encoder.on_step_end(iteration=1, trials=[])
    trial.invalidate_json_state()
    encoder.on_step_end(iteration=2, trials=[])
    assert trial._state_json is None  # left to Ray's next snapshot
