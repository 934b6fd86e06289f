"""A user trainable that imports torch inside its function, as Ray Tune's own examples do.

    "trainable": "torch_inside_trainable:fit"   (tests/e2e on PYTHONPATH)

Nothing at module level imports torch, so the first trial in a fresh Ray worker
imports it mid-trial, after raysweep seeded the trial. Its metrics depend on
torch's global RNG (random initial weights, random data) and on the determinism
switches (a conv + LSTM on CUDA), so an unseeded torch gives other numbers.
``config["device"]`` is ``cpu`` or ``cuda``; ``config["amp"]`` trains under
``torch.autocast`` (bfloat16) on that device.
"""

from __future__ import annotations

from typing import Any

from ray import tune


def fit(config: dict[str, Any]) -> None:
    """A few SGD steps of a tiny conv + LSTM regressor on random data from torch's RNG."""
    import torch
    from torch import nn

    import raysweep

    device = torch.device(str(config.get("device", "cpu")))

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv1d(4, 8, kernel_size=3, padding=1)
            self.lstm = nn.LSTM(8, 8, batch_first=True)
            self.head = nn.Linear(8, 1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            hidden = torch.relu(self.conv(x)).transpose(1, 2)
            out, _ = self.lstm(hidden)
            return self.head(out[:, -1])

    model = Net().to(device)
    x = torch.randn(32, 4, 12).to(device)
    y = torch.randn(32, 1).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=float(config["lr"]))
    for step in range(1, int(config.get("steps", 3)) + 1):
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bool(config.get("amp"))):
            loss = nn.functional.mse_loss(model(x).float(), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        metrics = {
            "loss": loss.item(),
            "step": step,
            "seeded": float(torch.initial_seed() == raysweep.trial_seed()),
            "deterministic": float(torch.are_deterministic_algorithms_enabled()),
        }
        if device.type == "cuda" and hasattr(torch.cuda, "get_per_process_memory_fraction"):
            fraction = torch.cuda.get_per_process_memory_fraction(torch.cuda.current_device())
            metrics["memory_fraction"] = fraction  # an index: "cuda" alone is refused
        tune.report(metrics)
