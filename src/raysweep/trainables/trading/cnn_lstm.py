"""The ``cnn_lstm`` entry model: a CNN-LSTM over each row's window of feature bars (torch).

The sequence model our users train on bars, as a built-in entry model beside the
GBMs: the same walk-forward folds, purging, backtest and metrics (``trainable.py``
calls it where it calls ``model.fit_predict``). Per fold:

* the features are standardised with the training rows' statistics (NaN -> 0) and
  put on the trial's device once, with each row's window as indices into them
  (``seq_len`` bars of its own symbol, up to and including the row: nothing later);
  batches are gathered there, so the data crosses to the GPU once per fold;
* on CUDA the forward pass runs under ``torch.autocast`` (bfloat16 where the card
  has it, else float16 with a gradient scaler);
* the model is seeded from the trial's seed and the fold (``model.fold_seed``), the
  batches shuffled by a CPU generator with that seed, and torch's deterministic
  switches are the trial's (``repro/determinism.py``): a deterministic trial repeats
  exactly on CPU, and on CUDA with ``CUBLAS_WORKSPACE_CONFIG`` set (the run sets it).

A fold's model is fitted afresh, so the trial's checkpoints (between folds) hold no
weights; a resumed trial refits the next fold as an uninterrupted one would.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from raysweep.errors import TrainableError
from raysweep.repro.determinism import set_deterministic
from raysweep.trainables.context import TrialContext
from raysweep.trainables.trading.cnn_lstm_params import CNN_LSTM, CnnLstmParams
from raysweep.trainables.trading.labels import N_CLASSES
from raysweep.trainables.trading.model import fold_seed, standardise

_PREDICT_BATCH = 4096


def window_index(symbols: np.ndarray, rows: np.ndarray, seq_len: int) -> np.ndarray:
    """``(len(rows), seq_len)`` row numbers: each row's window, oldest first.

    Rows are sorted by (symbol, time); a window that would reach before its symbol's
    first row repeats that first row instead of taking another symbol's bars.
    """
    n = len(symbols)
    changes = np.ones(n, dtype=bool)
    changes[1:] = symbols[1:] != symbols[:-1]
    first = np.maximum.accumulate(np.where(changes, np.arange(n), 0))
    offsets = np.arange(-seq_len + 1, 1)
    index = rows[:, None] + offsets[None, :]
    return np.maximum(index, first[rows][:, None]).astype(np.int64)


def fit_predict_cnn_lstm(
    own: dict[str, Any],
    ctx: TrialContext,
    fold: int,
    features: np.ndarray,
    symbols: np.ndarray,
    labels: np.ndarray,
    train: np.ndarray,
    val: np.ndarray,
) -> np.ndarray:
    """Class probabilities (len(val), 3) of the validation rows from a model fit on ``train``."""
    import torch

    hp = CnnLstmParams.from_config(own)
    y = labels[train].astype(np.int64)
    if len(np.unique(y)) < 2:  # as the GBM entry models do
        counts = np.bincount(y, minlength=N_CLASSES) + 1.0
        return np.tile(counts / counts.sum(), (len(val), 1))
    device = _device(ctx, torch)
    set_deterministic(ctx.deterministic, threads=ctx.cpus)
    seed = fold_seed(ctx.seed, fold)
    torch.manual_seed(seed)
    _, scaled = standardise(features[train], features)
    table = torch.from_numpy(np.nan_to_num(scaled, nan=0.0, posinf=0.0, neginf=0.0)).to(device)
    train_windows = torch.from_numpy(window_index(symbols, train, hp.seq_len)).to(device)
    val_windows = torch.from_numpy(window_index(symbols, val, hp.seq_len)).to(device)
    targets = torch.from_numpy(y).to(device)
    model = build_model(features.shape[1], hp).to(device)
    _train(model, hp, table, train_windows, targets, device, seed)
    return _predict(model, table, val_windows, device)


def build_model(n_features: int, hp: CnnLstmParams) -> Any:
    """The CNN-LSTM: causal Conv1d + ReLU over time, an LSTM, a linear head on the last step."""
    import torch
    from torch import nn

    class CnnLstm(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.pad = hp.kernel_size - 1  # left only: step t sees bars <= t
            self.conv = nn.Conv1d(n_features, hp.conv_channels, hp.kernel_size)
            self.lstm = nn.LSTM(
                hp.conv_channels,
                hp.hidden_size,
                hp.num_layers,
                batch_first=True,
                dropout=hp.dropout if hp.num_layers > 1 else 0.0,
            )
            self.drop = nn.Dropout(hp.dropout)
            self.head = nn.Linear(hp.hidden_size, N_CLASSES)

        def forward(self, x: torch.Tensor) -> torch.Tensor:  # (batch, seq_len, features)
            h = nn.functional.pad(x.transpose(1, 2), (self.pad, 0))
            h = torch.relu(self.conv(h)).transpose(1, 2)
            out, _ = self.lstm(h)
            return self.head(self.drop(out[:, -1]))

    return CnnLstm()


def _train(
    model: Any, hp: CnnLstmParams, table: Any, windows: Any, targets: Any, device: Any, seed: int
) -> None:
    import torch

    cuda = device.type == "cuda"
    half = torch.bfloat16 if cuda and torch.cuda.is_bf16_supported() else torch.float16
    scaler = torch.amp.GradScaler("cuda", enabled=cuda and half == torch.float16)
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=hp.learning_rate, weight_decay=hp.weight_decay
    )
    loss_fn = torch.nn.CrossEntropyLoss()
    shuffle = torch.Generator().manual_seed(seed)
    n = windows.shape[0]
    model.train()
    for _ in range(hp.epochs):
        order = torch.randperm(n, generator=shuffle).to(device)
        for begin in range(0, n, hp.batch_size):
            idx = order[begin : begin + hp.batch_size]
            batch = table[windows[idx]]
            with torch.autocast(device.type, dtype=half, enabled=cuda):
                loss = loss_fn(model(batch).float(), targets[idx])
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()


def _predict(model: Any, table: Any, windows: Any, device: Any) -> np.ndarray:
    import torch

    cuda = device.type == "cuda"
    half = torch.bfloat16 if cuda and torch.cuda.is_bf16_supported() else torch.float16
    model.eval()
    parts = []
    with torch.no_grad():
        for begin in range(0, windows.shape[0], _PREDICT_BATCH):
            batch = table[windows[begin : begin + _PREDICT_BATCH]]
            with torch.autocast(device.type, dtype=half, enabled=cuda):
                logits = model(batch)
            parts.append(torch.softmax(logits.float(), dim=1).double().cpu())
    if not parts:
        return np.empty((0, N_CLASSES))
    return torch.cat(parts).numpy()


def _device(ctx: TrialContext, torch: Any) -> Any:
    """The trial's GPU (``cuda:0``: Ray shows a trial only its own) or the CPU."""
    if not ctx.gpu_ids:
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise TrainableError(
            f"trading: entry_model {CNN_LSTM!r}: GPU {', '.join(ctx.gpu_ids)} was assigned "
            "but CUDA is unavailable to torch"
        )
    from raysweep.gpu.guard import cap_torch_memory

    cap_torch_memory(ctx.gpu_fraction)  # time-slicing: torch's allocator at the trial's share
    return torch.device("cuda:0")
