"""Data-parallel training inside one trial: one torch.distributed process per GPU (or CPU).

The trial's own process (the Ray actor) starts ``world`` replica processes,
relays rank 0's reports to Ray Tune one at a time, and ends every replica when
the trial ends for any reason: it finished, the scheduler stopped it, a replica
failed, or the trial's process died (each replica watches it).

CPU replicas are forked from a multiprocessing fork server that has torch and
the training module imported, started once per trial process and reused by its
later trials (Ray reuses trial actors): a replica starts in a fraction of a
second instead of importing torch afresh. GPU replicas are spawned, as PyTorch
recommends for CUDA: a fork server whose imports had initialised the CUDA driver
would hand its forks a driver they cannot use, and GPU trials run long enough
for a fresh import not to matter. Each replica takes the trial's current
environment (a fork server keeps the one of the first trial).

Replicas rendezvous through a file in a private temporary directory, so trials
never race for a TCP port. GPUs use NCCL, CPUs use Gloo.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import signal
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from raysweep.errors import TrainableError
from raysweep.trainables.builtins import Reporter

_POLL_S = 0.5
_END_GRACE_S = 5.0
# Imported once by the fork server: the parent's main module (as spawn does in
# every replica), torch, what torch imports on first use of deterministic
# algorithms (torch._inductor, ~2 s), and the module of the replica function
# (added per call). A module that does not import is skipped.
_PRELOAD = ("__main__", "torch", "torch.distributed", "torch._inductor")


@dataclass(frozen=True)
class _Trial:
    """The trial's process as its replicas see it: its pid and environment."""

    pid: int
    environ: dict[str, str]

    @classmethod
    def here(cls) -> _Trial:
        return cls(os.getpid(), dict(os.environ))


@dataclass(frozen=True)
class Replica:
    """Where one replica runs: its rank among ``world``, its device and its threads."""

    rank: int
    world: int
    device: str  # "cpu" or "cuda:<local index>"
    threads: int

    @property
    def main(self) -> bool:
        """Rank 0: the replica that evaluates, checkpoints and reports."""
        return self.rank == 0


ReplicaFn = Callable[[Replica, Any, Reporter], None]
"""``fn(replica, payload, report)``: trains one replica; only rank 0's ``report`` is relayed."""


def run_data_parallel(
    fn: ReplicaFn,
    payload: Any,
    world: int,
    *,
    cuda: bool,
    threads: int,
    report: Reporter,
    start_method: str | None = None,
) -> None:
    """Run ``fn`` in ``world`` replica processes and relay rank 0's reports to ``report``.

    ``fn`` must be importable by name (replicas import its module). Raises
    TrainableError with the replica's traceback when one fails; any exception
    from ``report`` (a scheduler stopping the trial) ends every replica.
    ``start_method`` overrides the default: "spawn" for CUDA, else "forkserver".
    """
    if world < 2:
        raise ValueError(f"data-parallel training needs at least 2 replicas (got {world})")
    method = start_method or ("spawn" if cuda else "forkserver")
    mp: Any = multiprocessing.get_context(method)
    if method == "forkserver":
        mp.set_forkserver_preload([*_PRELOAD, fn.__module__])  # read when the server starts
    messages: Any = mp.Queue()
    acks: Any = mp.SimpleQueue()
    with tempfile.TemporaryDirectory(prefix="raysweep-ddp-") as tmp:
        rendezvous = f"file://{Path(tmp) / 'rendezvous'}"
        procs = [
            mp.Process(
                target=_replica_main,
                args=(fn, payload, replica, rendezvous, messages, acks, _Trial.here()),
                name=f"raysweep-replica-{replica.rank}",
                daemon=True,
            )
            for replica in replicas(world, cuda=cuda, threads=threads)
        ]
        try:
            for proc in procs:
                proc.start()
            _relay(procs, messages, acks, report)
        finally:
            _end(procs)
            messages.cancel_join_thread()
            messages.close()


def replicas(world: int, *, cuda: bool, threads: int) -> list[Replica]:
    """One replica per rank: GPU ``rank`` of the trial's visible GPUs, or a share of its CPUs."""
    per_replica = max(1, threads // world)
    return [
        Replica(rank, world, f"cuda:{rank}" if cuda else "cpu", per_replica)
        for rank in range(world)
    ]


def _relay(procs: Sequence[BaseProcess], messages: Any, acks: Any, report: Reporter) -> None:
    """Pass rank 0's reports on until every replica is done; raise on a failure."""
    done: set[int] = set()
    while len(done) < len(procs):
        try:
            kind, rank, body = messages.get(timeout=_POLL_S)
        except queue.Empty:
            exited = _exited(procs, done)
            if exited is None:
                continue
            try:  # a replica flushes its last message before it exits: read that first
                kind, rank, body = messages.get(timeout=_POLL_S)
            except queue.Empty:
                rank, code = exited
                how = (
                    f"was killed by {signal.Signals(-code).name}"
                    if code < 0
                    else f"exited with code {code}"
                )
                raise TrainableError(
                    f"data-parallel replica {rank} of {len(procs)} {how} without reporting an "
                    "error (out of host memory? the kernel log names the OOM killer's victims)"
                ) from None
        if kind == "report":
            metrics, checkpoint = body
            report(metrics, Path(checkpoint) if checkpoint else None)
            acks.put(True)  # rank 0 may now delete the checkpoint and go on
        elif kind == "error":
            raise TrainableError(f"data-parallel replica {rank} of {len(procs)} failed:\n{body}")
        else:
            done.add(rank)


def _exited(procs: Sequence[BaseProcess], done: set[int]) -> tuple[int, int] | None:
    """(rank, exit code) of a replica that exited before saying it was done, if any."""
    for rank, proc in enumerate(procs):
        if rank not in done and proc.exitcode is not None:
            return rank, proc.exitcode
    return None


def _end(procs: Sequence[BaseProcess]) -> None:
    """Terminate replicas still running, then kill stragglers.

    After a stopped or failed trial that ends training; after a finished one it
    only spares the trial the replicas' interpreter shutdown (about 1 s with torch):
    each has already sent its last message.
    """
    for proc in procs:
        if proc.is_alive():
            proc.terminate()
    deadline = time.monotonic() + _END_GRACE_S
    for proc in procs:
        proc.join(max(0.0, deadline - time.monotonic()))
        if proc.is_alive():
            proc.kill()
            proc.join()


def _replica_main(
    fn: ReplicaFn,
    payload: Any,
    replica: Replica,
    rendezvous: str,
    messages: Any,
    acks: Any,
    trial: _Trial,
) -> None:
    """Entry point of a replica process."""
    _exit_with_trial(trial.pid)
    os.environ.clear()
    os.environ.update(trial.environ)  # before CUDA initialises: the trial's GPUs
    try:
        import torch
        import torch.distributed as dist

        if replica.device.startswith("cuda"):
            torch.cuda.set_device(torch.device(replica.device))
        backend = "nccl" if replica.device.startswith("cuda") else "gloo"
        dist.init_process_group(
            backend, init_method=rendezvous, rank=replica.rank, world_size=replica.world
        )
        try:
            report = _relaying_reporter(messages, acks) if replica.main else _discard
            fn(replica, payload, report)
        finally:
            dist.destroy_process_group()
    except BaseException:
        messages.put(("error", replica.rank, traceback.format_exc()))
        messages.close()
        messages.join_thread()
        sys.exit(1)
    messages.put(("done", replica.rank, None))
    messages.close()
    messages.join_thread()


def _relaying_reporter(messages: Any, acks: Any) -> Reporter:
    def report(metrics: dict[str, float], checkpoint_dir: Path | None) -> None:
        messages.put(("report", 0, (metrics, str(checkpoint_dir) if checkpoint_dir else None)))
        acks.get()  # the trial has reported it: the checkpoint was copied, training goes on

    return report


def _discard(metrics: dict[str, float], checkpoint_dir: Path | None) -> None:
    return None


def _exit_with_trial(pid: int) -> None:
    """End this process as soon as the trial's process is gone (e.g. ``kill -9``)."""
    import psutil

    try:
        trial = psutil.Process(pid)
    except psutil.NoSuchProcess:
        os._exit(1)

    def watch() -> None:
        while True:
            try:  # is_running also tells a reused pid from the trial's process
                if not trial.is_running() or trial.status() == psutil.STATUS_ZOMBIE:
                    break
            except psutil.NoSuchProcess:
                break
            time.sleep(_POLL_S)
        os._exit(1)

    threading.Thread(target=watch, name="raysweep-trial-watch", daemon=True).start()
