"""The Ray Tune function trainable raysweep runs: seed, pin devices, cap GPU memory, train."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from raysweep.search.indexed import INDEX_KEY
from raysweep.trainables.context import TrialContext, set_trial_context
from raysweep.trainables.trial_error import PASS_THROUGH, whole_error
from raysweep.trainables.trial_info import trial_info_line

TRIAL_INFO_FILE = "trial_info.jsonl"


@dataclass(frozen=True)
class TrialPlan:
    """What every trial of a sweep shares; pickled once into the trainable."""

    trainable: str
    master_seed: int
    metric: str
    mode: str
    trainable_args: dict[str, Any] = field(default_factory=dict)
    cpus: int = 1
    gpu_fraction: float = 0.0
    deterministic: bool = True
    checkpoint_frequency: int = 0
    checkpoint_at: frozenset[int] = frozenset()  # the scheduler's pause points
    driver_visible_devices: str | None = None
    info_path: str | None = None  # run_dir/trial_info.jsonl (run dirs are on shared storage)
    memory_probe_path: str | None = None  # gpus_per_trial auto's probe: torch's peak goes here
    working_dir: str | None = None  # --working-dir on a cluster: where it was on the driver

    def context(self, index: int, gpu_ids: tuple[str, ...] = ()) -> TrialContext:
        """The context trial ``index`` runs with, on the GPUs ``gpu_ids`` (none: CPUs)."""
        from raysweep.repro.seeds import trial_seed_for

        return TrialContext(
            index=index,
            seed=trial_seed_for(self.master_seed, index),
            metric=self.metric,
            mode=self.mode,
            trainable_args=shipped_paths(self.trainable_args, self.working_dir),
            cpus=self.cpus,
            gpu_ids=gpu_ids,
            gpu_fraction=self.gpu_fraction if gpu_ids else 0.0,
            deterministic=self.deterministic,
            checkpoint_frequency=self.checkpoint_frequency,
            checkpoint_at=self.checkpoint_at,
            master_seed=self.master_seed,
        )


def resolve_function(trainable: str) -> tuple[Callable[..., Any], bool]:
    """The function to call and whether it is a built-in (takes a TrialContext)."""
    from raysweep.registry import import_ref
    from raysweep.trainables.builtins import BUILTIN_TRAINABLES
    from raysweep.trainables.user import load_user_trainable

    if trainable in BUILTIN_TRAINABLES:
        return import_ref(BUILTIN_TRAINABLES[trainable]), True
    return load_user_trainable(trainable), False


def make_trainable(plan: TrialPlan) -> Callable[[dict[str, Any]], Any]:
    """A Ray Tune function trainable that reseeds and pins devices at every trial start.

    torch is seeded, switched and, on a fraction of a GPU, has its allocator capped
    at the trial's share (``raysweep.gpu.guard``) whenever the trial imports it:
    before the trial starts or during it (``raysweep.repro.trial_start``).

    Actors are reused between trials, so everything a trial sets is set again by
    the next one: RNG states, determinism switches and the trial context.

    Whatever the trial raises reaches Ray as a ``TrialError`` carrying the original
    type name, message and traceback (``trainables.trial_error``): every exception
    type survives the trip to the driver, which goes on with the other trials.
    """

    def trial(config: dict[str, Any]) -> Any:
        try:
            return _run_trial(plan, config)
        except PASS_THROUGH:  # Ray Tune's own ways of ending a trial, and Ctrl-C
            raise
        except BaseException as exc:  # any type, picklable or not: kept whole as text
            raise whole_error(exc) from None

    trial.__name__ = trial.__qualname__ = _trainable_name(plan.trainable)
    return trial


def _run_trial(plan: TrialPlan, config: dict[str, Any]) -> Any:
    """Seed, pin devices and call the trainable for one trial (see ``make_trainable``)."""
    from raysweep.repro.trial_start import TrialStart, started_trial

    params = dict(config)
    index = int(params.pop(INDEX_KEY, 0))
    gpu_ids = _trial_gpu_ids(plan)
    if gpu_ids:
        from raysweep.gpu.mps import apply_client_limits

        apply_client_limits(plan.gpu_fraction, gpu_ids)  # MPS clients: before CUDA initialises
    func, builtin = resolve_function(plan.trainable)  # imports torch if the trainable does
    ctx = plan.context(index, gpu_ids)
    _record_trial_info(plan.info_path, ctx, "start")
    if plan.memory_probe_path:
        from raysweep.gpu.autopack import start_torch_peak_writer

        start_torch_peak_writer(plan.memory_probe_path)
    set_trial_context(ctx)
    # Seeds, switches and (on a GPU share) caps torch now, or when the trial imports it.
    start = TrialStart(ctx.seed, plan.deterministic, plan.cpus, ctx.gpu_fraction)
    try:
        with started_trial(start):
            outcome = func(params, ctx) if builtin else func(params)
    finally:
        set_trial_context(None)
    _record_trial_info(plan.info_path, ctx, "returned")  # not stopped by the scheduler
    return outcome


def shipped_paths(args: dict[str, Any], working_dir: str | None) -> dict[str, Any]:
    """``args`` with paths inside the driver's ``--working-dir`` pointing at this node's copy.

    Ray unpacks the working directory on each node and records where in
    ``TUNE_ORIG_WORKING_DIR``; a file the driver named inside it is found there.
    """
    local = os.environ.get("TUNE_ORIG_WORKING_DIR")
    if not working_dir or not local:
        return dict(args)
    moved = {}
    for key, value in args.items():
        if isinstance(value, str) and value.startswith(working_dir.rstrip("/") + "/"):
            candidate = os.path.join(local, os.path.relpath(value, working_dir))
            if not os.path.exists(value) and os.path.exists(candidate):
                value = candidate
        moved[key] = value
    return moved


def _trainable_name(trainable: str) -> str:
    return trainable.rpartition(":")[2] or "trial"


def _trial_gpu_ids(plan: TrialPlan) -> tuple[str, ...]:
    """Physical ids of the GPUs Ray gave this trial (empty on CPU)."""
    if plan.gpu_fraction <= 0:
        return ()
    import ray

    from raysweep.gpu.allocation import physical_gpu_ids

    return physical_gpu_ids(ray.get_gpu_ids(), plan.driver_visible_devices)


def _record_trial_info(path: str | None, ctx: TrialContext, event: str) -> None:
    """Append the trial's index, seed, devices and wall time to the run's trial_info.jsonl.

    One short line per event, written with O_APPEND, so concurrent trials never
    tear each other's lines and the cost stays O(1) per trial.
    """
    if not path:
        return
    import ray
    from ray import tune

    try:
        trial_id = tune.get_context().get_trial_id()
    except Exception:
        return
    line = trial_info_line(trial_id, event, ctx, ray.get_runtime_context().get_node_id())
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError:  # the run directory is not on this node's filesystem: nothing to record
        return
    try:
        os.write(fd, line)
    finally:
        os.close(fd)
