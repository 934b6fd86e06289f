"""The table of every private Ray name raysweep uses: what each patch replaces or reads.

Grouped by the ``_raycompat`` module that relies on it (``used_by``). A name
read through an object (``controller._storage``) is declared on the class it
belongs to. Targets of ``scheduler_state`` and ``searcher_state`` are used by
both engines; the rest only when Ray Tune runs the trials.
"""

from __future__ import annotations

from raysweep._raycompat.private_name import Target
from raysweep._raycompat.result_buffer import CROSSED_BUFFER_ARGS

BOTH = ("ray", "local")
_TC = "ray.tune.execution.tune_controller"
_STORAGE = "ray.train._internal.storage"
_CKPT = "ray.train._internal.checkpoint_manager"
_META = "ray.tune.trainable.metadata"
_SEARCHER = "ray.tune.search.searcher"
_TRIAL = "ray.tune.experiment.trial"
_SESSION = "ray.train._internal.session"
_OPTUNA = "ray.tune.search.optuna.optuna_search"
# ray.init's warning when called outside the main thread (interrupt.quiet_thread_notice)
THREAD_NOTICE = "SIGTERM handler is not set because current thread"


def _fields(
    module: str,
    cls: str,
    names: str,
    used_by: str,
    engines: tuple[str, ...] = ("ray",),
    lazy: bool = False,
) -> list[Target]:
    """One ``field`` target per space-separated name of ``cls``'s instances."""
    return [
        Target(module, f"{cls}.{name}", "field", (), used_by, engines, lazy=lazy)
        for name in names.split()
    ]


def _snapshots() -> list[Target]:
    """snapshots.py (fast, incremental experiment snapshots), snapshot_text.py,
    searcher_snapshot.py (the searcher saved inside the snapshot)."""
    return [
        Target(_TC, "TuneController.save_to_dir", "callable", ("self",), "snapshots"),
        # The snapshot document raysweep writes in Ray's place: a key Ray adds is refused.
        Target(
            _TC,
            "TuneController.save_to_dir",
            "keys",
            ("trial_data", "runner_data", "stats", "start_time"),
            "snapshots",
        ),
        Target(_TC, "TuneController._get_trial_checkpoints", "callable", ("self",), "snapshots"),
        Target(_TC, "TuneController.__getstate__", "callable", ("self",), "snapshots"),
        Target(_TC, "TuneController.experiment_state_file_name", "value", (), "snapshots"),
        *_fields(
            _TC,
            "TuneController",
            "_start_time _storage _search_alg _callbacks _session_str",
            "snapshots",
        ),
        Target(
            "ray.tune.search.search_generator",
            "SearchGenerator.save_to_dir",
            "callable",
            ("self", "dirpath", "session_str"),
            "snapshots",
        ),
        # searcher_snapshot.py: the chain restored from files the snapshot held
        Target(
            "ray.tune.search.search_generator",
            "SearchGenerator.restore_from_dir",
            "callable",
            ("self", "dirpath"),
            "searcher_snapshot",
        ),
        Target(
            "ray.tune.callback",
            "CallbackList.save_to_dir",
            "callable",
            ("self", "checkpoint_dir", "session_str"),
            "snapshots",
        ),
        Target(_STORAGE, "StorageContext.experiment_driver_staging_path", "field", (), "snapshots"),
        Target(
            _STORAGE,
            "_upload_to_fs_path",
            "callable",
            ("local_path", "fs", "fs_path", "exclude"),
            "snapshots",
        ),
        Target("ray.tune.utils.serialization", "TuneFunctionEncoder", "class", (), "snapshots"),
    ]


def _rotation_and_repair() -> list[Target]:
    """checkpoint_rotation.py, repair.py (a killed experiment's snapshot caught up)."""
    return [
        Target(_CKPT, "_delete_fs_path", "callable", ("fs", "fs_path"), "checkpoint_rotation"),
        Target(
            "ray.tune.execution.experiment_state",
            "_ExperimentCheckpointManager.on_trial_checkpoint",
            "callable",
            ("self", "trial"),
            "checkpoint_rotation",
        ),
        Target(_CKPT, "_CheckpointManager", "callable", ("checkpoint_config",), "repair"),
        *_fields(
            _CKPT,
            "_CheckpointManager",
            "_checkpoint_results _latest_checkpoint_result latest_checkpoint_result "
            "checkpoint_config",
            "repair",
        ),
        Target(
            "ray.train._internal.session",
            "_TrainingResult",
            "callable",
            ("checkpoint", "metrics"),
            "repair",
        ),
        Target(
            _META, "_TrainingRunMetadata.from_json_state", "callable", ("json_state",), "repair"
        ),
        Target(_META, "_TrainingRunMetadata.get_json_state", "callable", ("self",), "repair"),
        Target(
            _META,
            "_TrainingRunMetadata.update_metric",
            "callable",
            ("self", "metric", "value", "step"),
            "repair",
        ),
        Target(_META, "_TrainingRunMetadata.invalidate_cache", "callable", ("self",), "repair"),
        *_fields(
            _META,
            "_TrainingRunMetadata",
            "checkpoint_manager last_result last_result_time metric_analysis metric_n_steps",
            "repair",
        ),
        Target("ray.tune.result", "DEBUG_METRICS", "value", (), "repair"),
        *_fields(_STORAGE, "StorageContext", "current_checkpoint_index", "repair"),
        Target(
            "ray.tune.utils.serialization",
            "TuneFunctionDecoder",
            "callable",
            ("args", "allow_cloudpickle"),
            "repair",
        ),
    ]


def _trial_io() -> list[Target]:
    """trial_rows.py (per-trial rows safe against a racing upload), entry_encoder.py."""
    return [
        Target(
            "ray.tune.logger.json",
            "JsonLoggerCallback._restore_from_remote",
            "callable",
            ("self", "file_name", "trial"),
            "trial_rows",
        ),
        *_fields(_STORAGE, "StorageContext", "trial_fs_path storage_filesystem", "trial_rows"),
        Target(
            "ray.tune.experiment.trial",
            "Trial.get_json_state",
            "callable",
            ("self",),
            "entry_encoder",
        ),
    ]


def _actors_and_results() -> list[Target]:
    """actor_env.py, actor_reuse.py, result_buffer.py, registry_cache.py, usage_tags.py."""
    cache = "ray.tune.execution.class_cache"
    registry = "ray.tune.registry"
    return [
        Target(cache, "_ActorClassCache.get", "callable", ("self", "trainable_cls"), "actor_env"),
        *_fields(cache, "_ActorClassCache", "_cache", "actor_env"),
        Target(cache, "DEFAULT_ENV_VARS", "value", (), "actor_env"),
        Target(cache, "ENV_VARS_TO_PROPAGATE", "value", (), "actor_env"),
        Target(
            _TC,
            "TuneController._maybe_reuse_cached_actor",
            "callable",
            ("self", "trial"),
            "actor_reuse",
        ),
        *_fields(
            _TC,
            "TuneController",
            "_resetting_trials _trial_to_actor _actor_manager _started_actors",
            "actor_reuse",
        ),
        Target(
            "ray.air.execution._internal.actor_manager",
            "RayActorManager.is_actor_started",
            "callable",
            ("self", "tracked_actor"),
            "actor_reuse",
        ),
        Target(
            _TC,
            "TuneController._schedule_trial_train",
            "callable",
            ("self", "trial"),
            "result_buffer",
        ),
        # The order the controller passes the two settings in (the same in 2.58-2.60): a
        # release that passes them as documented gets a target of its own (``since=``).
        Target(
            _TC,
            "TuneController._schedule_trial_train",
            "source",
            (CROSSED_BUFFER_ARGS,),
            "result_buffer",
        ),
        Target(
            "ray.tune.trainable.trainable",
            "Trainable.train_buffered",
            "callable",
            ("self", "buffer_time_s", "max_buffer_length"),
            "result_buffer",
        ),
        Target(
            "ray.air._internal.usage", "tag_callbacks", "callable", ("callbacks",), "usage_tags"
        ),
        Target("ray._common.usage.usage_lib", "usage_stats_enabled", "callable", (), "usage_tags"),
        Target(registry, "_global_registry", "value", (), "registry_cache"),
        *[
            Target(registry, f"_Registry.{name}", "callable", params, "registry_cache")
            for name, params in (
                ("get", ("self", "category", "key")),
                ("contains", ("self", "category", "key")),
                ("register", ("self", "category", "key", "value")),
                ("unregister", ("self", "category", "key")),
                ("unregister_all", ("self",)),
            )
        ],
    ]


def _driver_access() -> list[Target]:
    """tuner_access.py, shutdown.py, interrupt.py, gcs_handshake.py."""
    return [
        Target("ray.tune.tuner", "Tuner._local_tuner", "field", (), "tuner_access"),
        Target(
            "ray.tune.impl.tuner_internal",
            "TunerInternal.get_run_config",
            "callable",
            ("self",),
            "tuner_access",
        ),
        Target(
            "ray.tune.impl.tuner_internal",
            "TunerInternal._tune_config",
            "field",
            (),
            "tuner_access",
        ),
        Target(
            "ray.tune.result_grid", "ResultGrid._experiment_analysis", "field", (), "tuner_access"
        ),
        Target("ray._private.worker", "_global_node", "value", (), "shutdown"),
        Target("ray._private.node", "Node.all_processes", "field", (), "shutdown"),
        Target("ray._private.services", "ProcessInfo.process", "field", (), "shutdown"),
        Target("ray._private.ray_constants", "PROCESS_TYPE_MONITOR", "value", (), "shutdown"),
        Target(
            "ray._private.authentication.authentication_token_setup", "", "module", (), "shutdown"
        ),
        Target(
            "ray._private.utils",
            "set_sigterm_handler",
            "callable",
            ("sigterm_handler",),
            "interrupt",
        ),
        Target("ray.tune.tune", "_setup_signal_catching", "callable", (), "interrupt"),
        # the warning quiet_thread_notice() drops, on the logger of ray.init's module
        Target("ray._private.worker", "init", "source", (THREAD_NOTICE,), "interrupt"),
        Target(
            "ray._private.authentication.authentication_token_setup",
            "ensure_token_if_auth_enabled",
            "callable",
            ("system_config", "create_token_if_missing"),
            "gcs_handshake",
        ),
        Target("ray._raylet", "GcsClient", "class", (), "gcs_handshake"),
    ]


def _schedulers_and_searchers() -> list[Target]:
    """scheduler_state.py, searcher_state.py: what both engines' schedulers and searchers use."""
    hyperband = "ray.tune.schedulers.hyperband"
    median = "ray.tune.schedulers.median_stopping_rule"
    return [
        *_fields(hyperband, "HyperBandScheduler", "_trial_info", "scheduler_state", BOTH),
        *_fields(hyperband, "_Bracket", "_halves", "scheduler_state", BOTH),
        Target(
            hyperband,
            "_Bracket.continue_trial",
            "callable",
            ("self", "trial"),
            "scheduler_state",
            BOTH,
        ),
        Target(
            median,
            "MedianStoppingRule._on_insufficient_samples",
            "callable",
            ("self", "tune_controller", "trial", "time"),
            "scheduler_state",
            BOTH,
        ),
        # The override only counts while Ray's rule still calls it.
        Target(
            median,
            "MedianStoppingRule.on_trial_result",
            "source",
            ("self._on_insufficient_samples(tune_controller, trial, time)",),
            "scheduler_state",
            BOTH,
        ),
        # paused_trials.py: Hyperband's paused trials rebuilt on a Ray engine resume (it
        # also reads HyperBandScheduler._trial_info, declared above)
        *_fields(hyperband, "_Bracket", "trials_to_unpause", "paused_trials"),
        Target(
            _TC,
            "TuneController._set_trial_status",
            "callable",
            ("self", "trial", "status"),
            "paused_trials",
        ),
        # continued_trials.py: a restored trial's earned rungs decided before it continues
        *_fields(_TRIAL, "Trial", "latest_checkpoint_result", "continued_trials"),
        *_fields(_SESSION, "_TrainingResult", "checkpoint metrics", "continued_trials"),
        Target(
            _TRIAL, "Trial.update_last_result", "callable", ("self", "result"), "continued_trials"
        ),
        Target(_TC, "TuneController.stop_trial", "callable", ("self", "trial"), "continued_trials"),
        *_fields(_SEARCHER, "Searcher", "_metric _mode", "searcher_state", BOTH),
        *_fields(
            _OPTUNA,
            "OptunaSearch",
            "_ot_trials _ot_study _completed_trials",
            "searcher_state",
            BOTH,
            lazy=True,
        ),
    ]


def _asha_rungs() -> list[Target]:
    """asha_rungs.py: the rank rule in Ray's ASHA bracket (both engines)."""
    asha = "ray.tune.schedulers.async_hyperband"
    bracket_args = ("min_t", "max_t", "reduction_factor", "s")
    return [
        Target(asha, "_Bracket", "callable", bracket_args, "asha_rungs", BOTH),
        Target(asha, "_Bracket.cutoff", "callable", ("self", "recorded"), "asha_rungs", BOTH),
        Target(
            asha,
            "_Bracket.on_result",
            "callable",
            ("self", "trial", "cur_iter", "cur_rew"),
            "asha_rungs",
            BOTH,
        ),
        # the override only counts while Ray's rule compares the new result with it; strict
        # mode filters a rung's record by the trials' indices, looked up by trial id
        Target(
            asha,
            "_Bracket.on_result",
            "source",
            (
                "cutoff = self.cutoff(recorded)",
                "cur_rew < cutoff",
                "recorded[trial.trial_id] = cur_rew",
            ),
            "asha_rungs",
            BOTH,
        ),
        *_fields(asha, "_Bracket", "rf", "asha_rungs", BOTH),
        *_fields(asha, "AsyncHyperBandScheduler", "_brackets", "asha_rungs", BOTH),
    ]


TARGETS: tuple[Target, ...] = (
    *_snapshots(),
    *_rotation_and_repair(),
    *_trial_io(),
    *_actors_and_results(),
    *_driver_access(),
    *_schedulers_and_searchers(),
    *_asha_rungs(),
)
