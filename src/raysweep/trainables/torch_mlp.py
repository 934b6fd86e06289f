"""Built-in torch MLP trainable: a classifier or regressor on a tabular dataset.

Hyperparameters (config): ``lr`` (1e-3), ``hidden_size`` (64), ``num_layers`` (2),
``dropout`` (0.0), ``batch_size`` (64), ``weight_decay`` (0.0), ``optimizer``
(``adam`` | ``sgd``), ``momentum`` (0.0, sgd only); ``epochs`` comes from
``trainable_args`` (10) unless the config sets it. One report per epoch.

Checkpoint directory: ``raysweep_checkpoint.json`` (epoch, reports, Python and
NumPy RNG states) and ``state.pt`` (model and optimizer state dicts, torch CPU,
CUDA and shuffle-generator RNG states), loaded with ``weights_only=True``.
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from raysweep.errors import TrainableError
from raysweep.gpu.guard import cap_torch_memory
from raysweep.repro.determinism import set_deterministic
from raysweep.trainables.builtins import (
    Reporter,
    positive_int_arg,
    ray_report,
    ray_start_checkpoint,
    read_checkpoint_meta,
    split_seed,
    write_checkpoint_meta,
)
from raysweep.trainables.context import TrialContext
from raysweep.trainables.data import Dataset, load_dataset, val_metrics

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
    """Train the MLP, calling ``report`` once per epoch; resume from ``checkpoint_dir``."""
    import torch

    hp = hyperparams(config)
    epochs = positive_int_arg({**ctx.trainable_args, **config}, "epochs", DEFAULT_EPOCHS)
    device = _device(ctx)
    set_deterministic(ctx.deterministic, threads=ctx.cpus)
    torch.manual_seed(ctx.seed)
    shuffle = torch.Generator().manual_seed(ctx.seed)
    data = _Tensors(dataset, device)
    n_out = dataset.n_classes if dataset.task == "classification" else 1
    model = _mlp(dataset.X_train.shape[1], n_out, hp).to(device)
    optimizer = _optimizer(model, hp)
    loss_fn = torch.nn.CrossEntropyLoss() if n_out > 1 else torch.nn.MSELoss()
    epoch, reports = 0, 0
    if checkpoint_dir is not None:
        epoch, reports = _load(Path(checkpoint_dir), model, optimizer, shuffle, device)
    n, batch = data.x_train.shape[0], hp["batch_size"]
    while epoch < epochs:
        model.train()
        order = torch.randperm(n, generator=shuffle).to(device)
        total = torch.zeros((), dtype=torch.float64, device=device)
        for begin in range(0, n, batch):
            idx = order[begin : begin + batch]
            loss = loss_fn(model(data.x_train[idx]), data.y_train[idx])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            total += loss.detach().double() * len(idx)
        epoch += 1
        reports += 1
        metrics = {**data.evaluate(model), "train_loss": float(total) / n, "epoch": epoch}
        if ctx.checkpointing and (ctx.checkpoint_due(reports) or epoch == epochs):
            with tempfile.TemporaryDirectory(prefix="raysweep-ckpt-") as tmp:
                _save(Path(tmp), model, optimizer, shuffle, epoch, reports, ctx.seed)
                report(metrics, Path(tmp))
        else:
            report(metrics, None)


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


def _device(ctx: TrialContext) -> Any:
    import torch

    if not ctx.gpu_ids:
        return torch.device("cpu")
    if len(ctx.gpu_ids) > 1:
        raise TrainableError(
            f"{NAME} trains on one GPU per trial; got GPUs {', '.join(ctx.gpu_ids)}. "
            "Set resources.gpus_per_trial to at most 1."
        )
    if not torch.cuda.is_available():
        raise TrainableError(f"{NAME}: GPU {ctx.gpu_ids[0]} was assigned but CUDA is unavailable")
    cap_torch_memory(ctx.gpu_fraction)  # torch is imported only now, after the wrapper's cap
    return torch.device("cuda:0")


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


def _save(
    directory: Path, model: Any, optimizer: Any, shuffle: Any, epoch: int, reports: int, seed: int
) -> None:
    import torch

    state = {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "torch_rng": torch.get_rng_state(),
        "shuffle_rng": shuffle.get_state(),
    }
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda_rng"] = torch.cuda.get_rng_state_all()
    torch.save(state, directory / "state.pt")
    version, mt, gauss = random.getstate()
    name, keys, pos, has_gauss, cached = np.random.get_state(legacy=True)
    keys = np.asarray(keys)
    write_checkpoint_meta(
        directory,
        NAME,
        epoch=epoch,
        reports=reports,
        seed=seed,
        python_rng=[version, list(mt), gauss],
        numpy_rng=[name, keys.tolist(), pos, has_gauss, cached],
    )


def _load(
    directory: Path, model: Any, optimizer: Any, shuffle: Any, device: Any
) -> tuple[int, int]:
    import torch

    meta = read_checkpoint_meta(directory, NAME)
    state = torch.load(directory / "state.pt", map_location="cpu", weights_only=True)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    torch.set_rng_state(state["torch_rng"])
    shuffle.set_state(state["shuffle_rng"])
    if "cuda_rng" in state and device.type == "cuda":
        torch.cuda.set_rng_state_all(state["cuda_rng"])
    version, mt, gauss = meta["python_rng"]
    random.setstate((version, tuple(mt), gauss))
    name, keys, pos, has_gauss, cached = meta["numpy_rng"]
    np.random.set_state((name, np.asarray(keys, dtype=np.uint32), pos, has_gauss, cached))
    return int(meta["epoch"]), int(meta["reports"])
