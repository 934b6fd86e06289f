"""Built-in torch MLP trainable: a classifier or regressor on a tabular dataset.

Hyperparameters (config): ``lr`` (1e-3), ``hidden_size`` (64), ``num_layers`` (2),
``dropout`` (0.0), ``batch_size`` (64), ``weight_decay`` (0.0), ``optimizer``
(``adam`` | ``sgd``), ``momentum`` (0.0, sgd only); ``epochs`` comes from
``trainable_args`` (10) unless the config sets it. One report per epoch.

A trial with several whole GPUs trains data-parallel (DistributedDataParallel,
one replica process per GPU); ``trainable_args.data_parallel`` does the same
across CPU processes. Checkpoints: ``raysweep.trainables.torch_mlp_state``.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from raysweep.errors import TrainableError
from raysweep.gpu.guard import cap_torch_memory
from raysweep.repro.determinism import set_deterministic
from raysweep.repro.seeds import seed_everything
from raysweep.trainables.builtins import (
    DATA_PARALLEL_ARG,
    Reporter,
    planned_replicas,
    positive_int_arg,
    ray_report,
    ray_start_checkpoint,
    split_seed,
)
from raysweep.trainables.context import TrialContext
from raysweep.trainables.data import Dataset, load_dataset, val_metrics
from raysweep.trainables.data_parallel import Replica, run_data_parallel
from raysweep.trainables.torch_mlp_state import load_state, replica_seed, rng_states, save_state

NAME = "torch_mlp"
DEFAULTS: dict[str, Any] = {
    "lr": 1e-3,
    "hidden_size": 64,
    "num_layers": 2,
    "dropout": 0.0,
    "batch_size": 64,
    "weight_decay": 0.0,
    "optimizer": "adam",
    "momentum": 0.0,
}
OPTIMIZERS = ("adam", "sgd")
DEFAULT_EPOCHS = 10
_EVAL_BATCH = 8192


def train_torch_mlp(config: dict[str, Any], ctx: TrialContext) -> None:
    """Ray Tune trainable: an MLP on ``ctx.trainable_args``' dataset."""
    dataset = load_dataset(ctx.trainable_args, split_seed(ctx))
    with ray_start_checkpoint() as start:
        fit_torch_mlp(config, ctx, dataset, ray_report, start)


def hyperparams(config: dict[str, Any]) -> dict[str, Any]:
    """Config merged over the defaults and checked; unknown keys are errors."""
    unknown = sorted(set(config) - set(DEFAULTS) - {"epochs"})
    if unknown:
        raise TrainableError(
            f"{NAME}: unknown hyperparameters {unknown}; "
            f"valid: {', '.join(sorted([*DEFAULTS, 'epochs']))}"
        )
    hp = {**DEFAULTS, **{k: v for k, v in config.items() if k != "epochs"}}
    for key in ("hidden_size", "num_layers", "batch_size"):
        value = hp[key]
        if isinstance(value, float) and value.is_integer():
            hp[key] = value = int(value)
        minimum = 0 if key == "num_layers" else 1
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise TrainableError(f"{NAME}: {key} must be an integer >= {minimum} (got {value!r})")
    ranges = {"lr": (0, None), "dropout": (0, 1), "weight_decay": (0, None), "momentum": (0, 1)}
    for key, (low, high) in ranges.items():
        value = hp[key]
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not number or value < low or (key == "lr" and value == 0) or (high and value >= high):
            raise TrainableError(f"{NAME}: invalid {key} {value!r}")
    if hp["optimizer"] not in OPTIMIZERS:
        raise TrainableError(f"{NAME}: invalid optimizer {hp['optimizer']!r}; one of {OPTIMIZERS}")
    return hp


def fit_torch_mlp(
    config: dict[str, Any],
    ctx: TrialContext,
    dataset: Dataset,
    report: Reporter,
    checkpoint_dir: Path | None = None,
) -> None:
    """Train the MLP, calling ``report`` once per epoch; resume from ``checkpoint_dir``.

    A trial with several GPUs (or ``trainable_args.data_parallel`` > 1 on CPUs)
    trains data-parallel: one replica per GPU, each on its share of every batch.
    """
    job = TrainingJob(hyperparams(config), _epochs(config, ctx), ctx, dataset, checkpoint_dir)
    world = data_parallel_size(ctx)
    if world == 1:
        train_replica(Replica(0, 1, _device(ctx), ctx.cpus), job, report)
        return
    if ctx.gpu_ids:
        _check_cuda(ctx)
    run_data_parallel(
        train_replica, job, world, cuda=bool(ctx.gpu_ids), threads=ctx.cpus, report=report
    )


def data_parallel_size(ctx: TrialContext) -> int:
    """Replicas a trial trains with: one per GPU, or ``trainable_args.data_parallel`` on CPUs."""
    asked = positive_int_arg(ctx.trainable_args, DATA_PARALLEL_ARG, 1)
    gpus = len(ctx.gpu_ids)
    if gpus > 1 and DATA_PARALLEL_ARG in ctx.trainable_args and asked != gpus:
        raise TrainableError(
            f"{NAME}: trainable_args.{DATA_PARALLEL_ARG} is {asked} but the trial has "
            f"{gpus} GPUs ({', '.join(ctx.gpu_ids)}); on GPUs it trains one replica per GPU"
        )
    if gpus == 1 and asked > 1:
        raise TrainableError(
            f"{NAME}: trainable_args.{DATA_PARALLEL_ARG} is {asked} but the trial has one GPU "
            f"({ctx.gpu_ids[0]}); set resources.gpus_per_trial to {asked}"
        )
    return planned_replicas(NAME, ctx.trainable_args, gpus)


@dataclass(frozen=True)
class TrainingJob:
    """What every replica of one trial trains (pickled into data-parallel replicas)."""

    hp: dict[str, Any]
    epochs: int
    ctx: TrialContext
    dataset: Dataset
    checkpoint_dir: Path | None


def _epochs(config: dict[str, Any], ctx: TrialContext) -> int:
    return positive_int_arg({**ctx.trainable_args, **config}, "epochs", DEFAULT_EPOCHS)


def train_replica(replica: Replica, job: TrainingJob, report: Reporter) -> None:
    """One replica's training loop (the only one when ``replica.world`` is 1).

    With several replicas every batch is split between them and each one's
    summed loss is scaled so that DDP's gradient average is the whole batch's
    mean gradient: the same update as training alone on the whole batch.
    """
    import torch

    hp, ctx, parallel = job.hp, job.ctx, replica.world > 1
    device = torch.device(replica.device)
    # A data-parallel replica is a process of its own that no trial start has seeded.
    set_deterministic(ctx.deterministic, threads=replica.threads)
    seed_everything(ctx.seed)
    shuffle = torch.Generator().manual_seed(ctx.seed)
    data = _Tensors(job.dataset, device)
    n_out = job.dataset.n_classes if job.dataset.task == "classification" else 1
    model = _mlp(job.dataset.X_train.shape[1], n_out, hp).to(device)
    if replica.rank:
        torch.manual_seed(replica_seed(ctx.seed, replica.rank))  # own dropout masks
    optimizer = _optimizer(model, hp)
    reduction = "sum" if parallel else "mean"
    loss_fn = (
        torch.nn.CrossEntropyLoss(reduction=reduction)
        if n_out > 1
        else torch.nn.MSELoss(reduction=reduction)
    )
    epoch, reports = 0, 0
    if job.checkpoint_dir is not None:
        epoch, reports = load_state(Path(job.checkpoint_dir), model, optimizer, shuffle, replica)
    net = _distributed(model, replica) if parallel else model
    n, batch = data.x_train.shape[0], hp["batch_size"]
    while epoch < job.epochs:
        net.train()
        order = torch.randperm(n, generator=shuffle).to(device)
        total = torch.zeros((), dtype=torch.float64, device=device)
        for begin in range(0, n, batch):
            idx = order[begin : begin + batch]
            if parallel:
                mine = idx[replica.rank :: replica.world]
                summed = loss_fn(net(data.x_train[mine]), data.y_train[mine])
                loss = summed * (replica.world / len(idx))
                total += summed.detach().double()
            else:
                loss = loss_fn(net(data.x_train[idx]), data.y_train[idx])
                total += loss.detach().double() * len(idx)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        if parallel:
            import torch.distributed as dist

            dist.all_reduce(total)
        epoch += 1
        reports += 1
        save = ctx.checkpointing and (ctx.checkpoint_due(reports) or epoch == job.epochs)
        rng = rng_states(replica) if save else []
        if not replica.main:
            continue
        metrics = {**data.evaluate(model), "train_loss": float(total) / n, "epoch": epoch}
        if save:
            with tempfile.TemporaryDirectory(prefix="raysweep-ckpt-") as tmp:
                save_state(Path(tmp), model, optimizer, shuffle, epoch, reports, ctx.seed, rng)
                report(metrics, Path(tmp))
        else:
            report(metrics, None)


def _distributed(model: Any, replica: Replica) -> Any:
    import torch
    from torch.nn.parallel import DistributedDataParallel

    device = torch.device(replica.device)
    return DistributedDataParallel(model, device_ids=[device] if device.type == "cuda" else None)


class _Tensors:
    """The dataset standardised with training statistics, as tensors on the device."""

    def __init__(self, dataset: Dataset, device: Any) -> None:
        import torch

        mean = dataset.X_train.mean(axis=0, dtype=np.float64)
        std = dataset.X_train.std(axis=0, dtype=np.float64)
        std[~(std > 0)] = 1.0

        def features(x: np.ndarray) -> Any:
            scaled = np.nan_to_num((x - mean) / std).astype(np.float32)
            return torch.from_numpy(scaled).to(device)

        self.task, self.y_val = dataset.task, dataset.y_val
        self.x_train, self.x_val = features(dataset.X_train), features(dataset.X_val)
        self.y_mean, self.y_std = 0.0, 1.0
        if dataset.task == "classification":
            self.y_train = torch.from_numpy(dataset.y_train.astype(np.int64)).to(device)
        else:
            self.y_mean = float(dataset.y_train.mean(dtype=np.float64))
            self.y_std = float(dataset.y_train.std(dtype=np.float64)) or 1.0
            scaled = ((dataset.y_train - self.y_mean) / self.y_std).astype(np.float32)
            self.y_train = torch.from_numpy(scaled).reshape(-1, 1).to(device)

    def evaluate(self, model: Any) -> dict[str, float]:
        import torch

        model.eval()
        with torch.no_grad():
            outs = [
                model(self.x_val[i : i + _EVAL_BATCH])
                for i in range(0, len(self.x_val), _EVAL_BATCH)
            ]
            out = torch.cat(outs).double()
        if self.task == "classification":
            pred = torch.softmax(out, dim=1).cpu().numpy()
        else:
            pred = out.reshape(-1).cpu().numpy() * self.y_std + self.y_mean
        return val_metrics(self.task, self.y_val, pred)


def _device(ctx: TrialContext) -> str:
    """The one device of a single-replica trial: its GPU (memory capped to its share) or CPU."""
    if not ctx.gpu_ids:
        return "cpu"
    _check_cuda(ctx)
    cap_torch_memory(ctx.gpu_fraction)  # as the trial start did; also for fits outside a trial
    return "cuda:0"


def _check_cuda(ctx: TrialContext) -> None:
    import torch

    if not torch.cuda.is_available():
        gpus = ", ".join(ctx.gpu_ids)
        raise TrainableError(f"{NAME}: GPU {gpus} was assigned but CUDA is unavailable")


def _mlp(n_in: int, n_out: int, hp: dict[str, Any]) -> Any:
    from torch import nn

    layers: list[nn.Module] = []
    width = n_in
    for _ in range(hp["num_layers"]):
        layers += [nn.Linear(width, hp["hidden_size"]), nn.ReLU()]
        if hp["dropout"] > 0:
            layers.append(nn.Dropout(hp["dropout"]))
        width = hp["hidden_size"]
    layers.append(nn.Linear(width, n_out))
    return nn.Sequential(*layers)


def _optimizer(model: Any, hp: dict[str, Any]) -> Any:
    import torch

    if hp["optimizer"] == "sgd":
        return torch.optim.SGD(
            model.parameters(),
            lr=hp["lr"],
            momentum=hp["momentum"],
            weight_decay=hp["weight_decay"],
        )
    return torch.optim.Adam(model.parameters(), lr=hp["lr"], weight_decay=hp["weight_decay"])
