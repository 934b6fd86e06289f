"""What a restored experiment's scheduler is given: the rows its trials already recorded."""

from __future__ import annotations

from raysweep._raycompat import experiment_state
from raysweep.config.schema import SweepSpec
from raysweep.rundir import Part, RunDir
from raysweep.schedulers.build import TIME_ATTR
from raysweep.schedulers.restore import RecordedTrial
from raysweep.search.indexed import INDEX_KEY


def scheduler_keys(spec: SweepSpec) -> tuple[str, ...]:
    """The result keys a scheduler of ``spec`` reads: iterations and every metric."""
    keys = [TIME_ATTR, spec.metric]
    keys += [o.metric for o in spec.objectives or ()]
    scheduler_metric = getattr(spec.scheduler, "metric", None)
    if scheduler_metric:
        keys.append(scheduler_metric)
    return tuple(dict.fromkeys(keys))


def recorded_trials(run_dir: RunDir, part: Part, spec: SweepSpec) -> list[RecordedTrial]:
    """The trials of ``part``'s newest snapshot in creation order, with their recorded rows.

    The snapshot lists its trials in no fixed order (Ray keeps them in a set until
    they are written; a restore re-adds them newest result first), so they are put
    in the order the searcher suggested them: Hyperband's brackets are filled in
    the order trials are added.
    """
    with run_dir.local_experiment(part, write_back=False) as exp_dir:
        states = experiment_state.read_trial_states(exp_dir)
        rows = experiment_state.read_trial_rows(exp_dir, scheduler_keys(spec))
    states = sorted(states, key=_suggested_at)
    return [RecordedTrial(s["trial_id"], tuple(rows.get(s["trial_id"], ()))) for s in states]


def _suggested_at(state: dict[str, object]) -> int:
    """The trial's index in suggestion order (a trial without one, last, in snapshot order)."""
    config = state.get("config")
    index = config.get(INDEX_KEY) if isinstance(config, dict) else None
    return index if isinstance(index, int) else 1 << 62
