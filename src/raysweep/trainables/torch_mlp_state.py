"""torch_mlp checkpoints: model, optimizer and every RNG a resumed trial needs.

Checkpoint directory: ``raysweep_checkpoint.json`` (epoch, reports, Python and
NumPy RNG states) and ``state.pt`` (model and optimizer state dicts, torch CPU,
CUDA and shuffle-generator RNG states, and with data-parallel training each
replica's torch RNG states), loaded with ``weights_only=True``.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np

from raysweep.repro.seeds import trial_seed_for
from raysweep.trainables.builtins import read_checkpoint_meta, write_checkpoint_meta
from raysweep.trainables.data_parallel import Replica

NAME = "torch_mlp"

RngState = tuple[Any, Any]
"""A replica's (torch CPU RNG state, its CUDA device's RNG state or None)."""


def replica_seed(seed: int, rank: int) -> int:
    """Torch seed of replica ``rank`` > 0 (its dropout masks): the trial-seed rule on both."""
    return trial_seed_for(seed, rank)


def rng_states(replica: Replica) -> list[RngState]:
    """Every replica's torch RNG states, gathered on all ranks (one replica: its own)."""
    import torch

    cuda = replica.device.startswith("cuda")
    own: RngState = (
        torch.get_rng_state(),
        torch.cuda.get_rng_state(torch.device(replica.device)) if cuda else None,
    )
    if replica.world == 1:
        return [own]
    import torch.distributed as dist

    gathered: list[Any] = [None] * replica.world
    dist.all_gather_object(gathered, own)
    return [(cpu.cpu(), None if dev is None else dev.cpu()) for cpu, dev in gathered]


def save_state(
    directory: Path,
    model: Any,
    optimizer: Any,
    shuffle: Any,
    epoch: int,
    reports: int,
    seed: int,
    replica_rngs: list[RngState],
) -> None:
    """Write a checkpoint of the (unwrapped) model into ``directory``."""
    import torch

    state: dict[str, Any] = {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "torch_rng": torch.get_rng_state(),
        "shuffle_rng": shuffle.get_state(),
    }
    if len(replica_rngs) > 1:
        state["replica_torch_rng"] = [cpu for cpu, _ in replica_rngs]
        state["replica_cuda_rng"] = [dev for _, dev in replica_rngs if dev is not None]
    elif torch.cuda.is_available() and torch.cuda.is_initialized():
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
        replicas=len(replica_rngs),
        python_rng=[version, list(mt), gauss],
        numpy_rng=[name, keys.tolist(), pos, has_gauss, cached],
    )


def load_state(
    directory: Path, model: Any, optimizer: Any, shuffle: Any, replica: Replica
) -> tuple[int, int]:
    """Restore a checkpoint into ``model`` and ``optimizer``; returns (epoch, reports).

    A replica restores its own RNG states when the checkpoint was written by as
    many replicas; otherwise rank 0 takes the saved torch state and the others
    keep their fresh seeds.
    """
    import torch

    meta = read_checkpoint_meta(directory, NAME)
    state = torch.load(directory / "state.pt", map_location="cpu", weights_only=True)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    shuffle.set_state(state["shuffle_rng"])
    cuda = replica.device.startswith("cuda")
    per_replica = state.get("replica_torch_rng", [])
    if len(per_replica) == replica.world > 1:
        torch.set_rng_state(per_replica[replica.rank])
        cuda_states = state.get("replica_cuda_rng", [])
        if cuda and len(cuda_states) == replica.world:
            torch.cuda.set_rng_state(cuda_states[replica.rank], torch.device(replica.device))
    elif replica.main:
        torch.set_rng_state(state["torch_rng"])
        if "cuda_rng" in state and cuda:
            torch.cuda.set_rng_state_all(state["cuda_rng"])
    version, mt, gauss = meta["python_rng"]
    random.setstate((version, tuple(mt), gauss))
    name, keys, pos, has_gauss, cached = meta["numpy_rng"]
    np.random.set_state((name, np.asarray(keys, dtype=np.uint32), pos, has_gauss, cached))
    return int(meta["epoch"]), int(meta["reports"])
