"""``sweep export-optuna``: a run directory as an Optuna study that optuna-dashboard opens.

Every trial of results.json goes in, in suggestion order (Optuna's trial number
is the position): completed trials COMPLETE with their final value, trials
stopped early by the scheduler PRUNED, errored ones FAIL with the error text as a
user attribute; each with its parameters under the distributions of sweep.json's
space and its metric per iteration as intermediate values. Reads the run
directory only; imports no Ray.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import optuna

from raysweep.config.schema import SweepSpec, is_sampled
from raysweep.errors import ConfigError
from raysweep.report.study import export_trials
from raysweep.rundir import RunDir


def open_storage(url: str) -> optuna.storages.BaseStorage:
    """An SQLAlchemy URL (``sqlite:///study.db``) or, without ``://``, a JournalStorage file."""
    if "://" in url:
        return optuna.storages.RDBStorage(url)
    from optuna.storages.journal import JournalFileBackend, JournalStorage

    Path(url).parent.mkdir(parents=True, exist_ok=True)
    return JournalStorage(JournalFileBackend(url))


def export_optuna(run_dir: RunDir, storage_url: str, study_name: str | None = None) -> str:
    """Write the run's trials as a new study; returns a line saying what was written.

    ConfigError (exit 2) when the study name is taken in that storage.
    """
    result = run_dir.read_results()
    spec = run_dir.read_spec()
    name = study_name or result.name
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    try:
        storage = open_storage(storage_url)
    except Exception as exc:  # SQLAlchemy's, the journal's, or the filesystem's error
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise ConfigError(
            f"cannot open the Optuna storage {storage_url!r}: {type(exc).__name__}: {first}"
        ) from None
    if name in {s.study_name for s in optuna.get_all_study_summaries(storage)}:
        raise ConfigError(
            f"study {name!r} already exists in {storage_url}; choose another --study-name"
        )
    trials = export_trials(spec, result, run_dir.trial_curves(result.metric))
    study = optuna.create_study(
        storage=storage,
        study_name=name,
        direction="minimize" if result.mode == "min" else "maximize",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # set_metric_names is experimental
        study.set_metric_names([result.metric])
    study.set_user_attr("raysweep_run", str(run_dir.path.resolve()))
    study.set_user_attr("raysweep_seed", spec.seed)
    study.set_user_attr("raysweep_constants", constant_space(spec))
    study.add_trials(trials)
    states: dict[str, int] = {}
    for trial in trials:
        states[trial.state.name] = states.get(trial.state.name, 0) + 1
    shown = ", ".join(f"{n} {s}" for s, n in sorted(states.items()))
    return f"study {name!r} in {storage_url}: {len(trials)} trials ({shown})"


def constant_space(spec: SweepSpec) -> dict[str, Any]:
    """The space's constants (not Optuna parameters; kept as a study attribute)."""
    return {k: v for k, v in spec.space.items() if not is_sampled(v)}
