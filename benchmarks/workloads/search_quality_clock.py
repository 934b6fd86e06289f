"""The peers' simulated clock and their record of observations (peers' venv; no raysweep).

A run is recorded as its observations in the order they were made, each
``[budget used, wall s, value, regret, fidelity, own regret]``:

- ``regret``: the true regret of this observation's configuration where the problem's
  regret is cheap (a formula, a lookup), else only where it became the best value
  observed at any fidelity (the harness's fallback rule needs no other; ``inf`` where
  not computed);
- ``own regret``: the regret of the configuration the optimizer would return once it
  has been told this observation, as its own API names it (``Record.told``), or None
  while it names none (the harness then falls back to the best value observed).

``workers`` trials are in flight at once, one fidelity step costs one unit of a
worker's time and the worker whose clock is earliest moves next (as Syne Tune's
simulated backend does): what the optimizers see is what they would see with
``workers`` slots of equal speed. When the budget is spent, the steps still in flight
end and are told (an optimizer hears every result the budget paid for).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from benchmarks.workloads.search_quality_problems import Problem

Observation = list[Any]  # [budget used, wall s, value, regret, fidelity, own regret]
Incumbent = Callable[[], Mapping[str, Any] | None]  # the optimizer's own, asked after a tell


@dataclass
class Record:
    """Budget used, every observation, and the optimizer's own incumbent after each tell.

    ``own``: asks the optimizer for the configuration it would return (None: it names
    none yet); unset, the incumbent is the configuration with the best value told so far
    at any fidelity (the rule of Syne Tune's ``ExperimentResult.best_config``).
    """

    problem: Problem
    budget: int
    own: Incumbent | None = None
    started: float = field(default_factory=time.perf_counter)
    used: int = 0
    observations: list[Observation] = field(default_factory=list)
    best_seen: float = math.inf  # the best value observed at any fidelity
    best_told: tuple[float, dict[str, Any] | None] = (math.inf, None)
    configs: list[dict[str, Any]] = field(default_factory=list)  # per observation

    @property
    def done(self) -> bool:
        return self.used >= self.budget

    def observe(self, config: Mapping[str, Any], z: int, cost: int) -> float:
        """The value at fidelity ``z``, recorded; the regret computed where cheap or for a
        new best value (a full fit otherwise: worth it for the fallback rule only)."""
        clean = {p.name: p.cast(config[p.name]) for p in self.problem.params}
        value = self.problem.value(clean, z)
        self.used += cost
        wall = time.perf_counter() - self.started
        best = value < self.best_seen
        self.best_seen = min(self.best_seen, value)
        regret = self.problem.regret(clean) if best or self.problem.cheap_regret else math.inf
        self.observations.append([self.used, wall, value, regret, z, None])
        self.configs.append(clean)
        return value

    def told(self, row: int) -> None:
        """The optimizer has been told observation ``row``: record its incumbent's regret."""
        value, config = self.observations[row][2], self.configs[row]
        if value < self.best_told[0]:
            self.best_told = (value, config)
        incumbent = self.best_told[1] if self.own is None else self.own()
        if incumbent is not None:
            clean = {p.name: p.cast(incumbent[p.name]) for p in self.problem.params}
            self.observations[row][5] = self.problem.regret(clean)


@dataclass
class Worker:
    clock: int = 0
    job: Any = None


def workers_in_time_order(workers: list[Worker], record: Record) -> Iterator[Worker]:
    """The worker whose clock is earliest, until the budget is spent."""
    while not record.done:
        yield min(workers, key=lambda w: w.clock)


def stepwise_run(record: Record, workers: int, start: Callable[[], tuple[Any, dict[str, Any]]],
                 deliver: Callable[[Any, int, float], bool]) -> None:  # fmt: skip
    """Trials that report every fidelity step, ``workers`` at once on the simulated clock.

    ``start()`` asks the optimizer for a trial: ``(handle, config)``. A step's value
    is delivered, ``deliver(handle, z, value)`` (True: the trial goes on), when the
    step ends, that is on its worker's next turn: the workers whose clocks are
    earlier, or as early, ask and step first, so several trials are in flight at
    once even where a trial is one step (a problem without a fidelity axis), and no
    optimizer hears a result before its step has ended.
    """
    pool = [Worker() for _ in range(workers)]

    def step_ends(worker: Worker) -> bool:
        handle, _, z, value, row = worker.job  # the step done, its observation's row
        goes_on = deliver(handle, z, value)
        record.told(row)
        return goes_on

    for worker in workers_in_time_order(pool, record):
        if worker.job is not None and not step_ends(worker):
            worker.job = None
        if worker.job is None:
            (handle, config), z = start(), 0
        else:
            handle, config, z = worker.job[:3]
        value = record.observe(config, z + 1, 1)
        worker.clock += 1
        worker.job = (handle, config, z + 1, value, len(record.observations) - 1)
    for worker in sorted(pool, key=lambda w: w.clock):  # the budget's last steps end
        if worker.job is not None:
            step_ends(worker)


def ask_tell_run(record: Record, workers: int, ask: Callable[[], Any],
                 tell: Callable[[Any, float, int], None],
                 unpack: Callable[[Any], tuple[dict[str, float], int]]) -> None:  # fmt: skip
    """A whole-fidelity ask/tell optimizer: a job runs at its fidelity in one go.

    The job's cost is its fidelity; it is told when its worker's clock reaches
    its end, the workers' jobs in the order they finish.
    """
    pool = [Worker() for _ in range(workers)]
    for worker in pool:
        job = ask()
        worker.job, worker.clock = job, unpack(job)[1]
    while not record.done:
        worker = min(pool, key=lambda w: w.clock)
        config, z = unpack(worker.job)
        value = record.observe(config, z, z)
        tell(worker.job, value, z)
        record.told(len(record.observations) - 1)
        worker.job = ask()
        worker.clock += unpack(worker.job)[1]
