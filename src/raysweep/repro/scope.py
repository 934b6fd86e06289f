"""What "the same seed" repeats for a config: the whole sweep, or each trial given its config.

Every trial repeats given its config and seed (``sweep repro`` checks it). The whole
sweep (which configs are suggested, which trials stop early, hence the best) repeats
only when nothing depends on the order in which results arrive or on speed:

* strict mode (``"reproducibility": {"strict": true}``), or one trial at a time
  (``search.max_concurrent`` 1); or grid or random search (configs from the seed
  alone) with the fifo scheduler (no early stopping);
* and no ``stop.time_budget_s`` (how many trials run then depends on speed).

The setting named to make the whole sweep repeat is strict mode when strict mode
takes this config (asked of the config schema itself, so it follows what strict mode
supports), else one trial at a time. ``sweep run`` prints :func:`repeat_scope` at
its start; repro.json records :func:`guarantee`.
"""

from __future__ import annotations

from dataclasses import dataclass

from raysweep.config.load import parse_spec, spec_to_json
from raysweep.config.schema import SweepSpec
from raysweep.errors import ConfigError

STRICT_SETTING = '"reproducibility": {"strict": true}'
SERIAL_SETTING = '"search": {"max_concurrent": 1}'
ORDER_FREE_SEARCH = ("grid", "random")  # configs from the seed alone, whatever finishes first


@dataclass(frozen=True)
class Scope:
    """Whether the whole sweep repeats, why (not), and what would make it."""

    whole: bool
    why: str
    fix: str | None = None  # what makes the whole sweep repeat (None: it already does)


def sweep_scope(spec: SweepSpec) -> Scope:
    """The decision :func:`repeat_scope` and :func:`guarantee` put in words."""
    budget = spec.stop.time_budget_s
    if budget is not None:
        return Scope(
            False,
            f"with stop.time_budget_s {budget:g} how many trials run depends on speed",
            "leave out stop.time_budget_s (search.num_samples and stop.max_iterations bound a "
            "sweep without depending on speed)",
        )
    if spec.reproducibility.strict:
        return Scope(True, "strict mode")
    if spec.search.max_concurrent == 1:
        return Scope(True, "one trial at a time")
    dependent = []
    if spec.search.algorithm not in ORDER_FREE_SEARCH:
        dependent.append(f"{spec.search.algorithm}'s suggestions")
    if spec.scheduler.type != "fifo":
        dependent.append(f"{spec.scheduler.type}'s early stops")
    if not dependent:
        return Scope(True, f"{spec.search.algorithm} search without early stopping")
    slots = spec.search.max_concurrent or "several"
    why = f"{' and '.join(dependent)} depend on the order results arrive ({slots} trials at a time)"
    return Scope(False, why, _whole_sweep_setting(spec))


def repeat_scope(spec: SweepSpec) -> str:
    """One line for the start of ``sweep run``: what the same seed repeats, and how to get more."""
    scope = sweep_scope(spec)
    if scope.whole:
        return (
            f"Same seed, same sweep ({scope.why}): the same configs, and every trial's "
            "metrics and end"
        )
    return (
        f"Same seed, same trials, not the same sweep: each trial repeats given its config "
        f"(sweep repro), but {scope.why}; for the whole sweep to repeat, {scope.fix}"
    )


def guarantee(spec: SweepSpec) -> str:
    """What this configuration promises, in one sentence (repro.json)."""
    scope = sweep_scope(spec)
    if spec.reproducibility.strict and scope.whole:
        return (
            "strict: configs and trial metrics depend only on the seed, the batch size and "
            f"the schedule ({spec.reproducibility.schedule}), not on timing or "
            "search.max_concurrent"
        )
    if scope.whole and spec.search.max_concurrent == 1:
        return "serial: configs and trial metrics repeat when rerun with max_concurrent 1"
    if scope.whole:
        return "seeded: configs come from the seed alone; each trial's metrics repeat"
    return f"per-trial only: each trial repeats with `sweep repro`, but {scope.why}"


def _whole_sweep_setting(spec: SweepSpec) -> str:
    """Strict mode when it takes this config, else one trial at a time."""
    data = spec_to_json(spec)
    data["reproducibility"] = {**data.get("reproducibility", {}), "strict": True}
    try:
        parse_spec(data)
    except ConfigError as refused:
        reason = str(refused).strip().splitlines()[-1].split(" (", 1)[0].strip()
        return f"set {SERIAL_SETTING} (strict mode does not take this config: {reason})"
    return f"set {STRICT_SETTING}"
