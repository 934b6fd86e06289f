"""Knobs: what each Ray setting in ``engines/ray/ray_env.py`` is worth.

The no-op sweep of the overhead benchmark, once per variant, interleaved
repeat by repeat. A variant is environment overrides: a Ray env var set to
Ray's own default undoes the matching raysweep default.

    python -m benchmarks.run knobs [--quick] [--repeats N] [--only NAME,NAME]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from benchmarks.harness.common import ratio, summarize
from benchmarks.harness.launch import Launch, bench_result, interleave
from benchmarks.suite.overhead import launch_metrics, run_sweep_noop

NAME = "knobs"
TITLE = "Knobs: the effect of each setting (no-op sweep)"


@dataclass(frozen=True)
class Variant:
    """One configuration of the no-op sweep."""

    name: str
    what: str
    env: dict[str, str] = field(default_factory=dict)


# Each variant changes one thing against "raysweep" (the settings as shipped).
VARIANTS: tuple[Variant, ...] = (
    Variant("raysweep", "settings as shipped (engines/ray/ray_env.py)"),
    Variant(
        "ray_loggers_on",
        "TUNE_DISABLE_AUTO_CALLBACK_LOGGERS=0: Ray's CSV + TensorBoard loggers back",
        env={"TUNE_DISABLE_AUTO_CALLBACK_LOGGERS": "0"},
    ),
    Variant(
        "ray_prestart_off",
        "RAY_prestart_worker_first_driver=0: no prestarted idle workers for trial actors to take",
        env={"RAY_prestart_worker_first_driver": "0"},
    ),
    Variant(
        "snapshot_auto",
        "TUNE_GLOBAL_CHECKPOINT_S=auto: Ray's experiment snapshot period (>= 10 s)",
        env={"TUNE_GLOBAL_CHECKPOINT_S": "auto"},
    ),
)


def run_variant(variant: Variant, trials: int) -> Launch:
    """One no-op sweep with the variant's env and patches."""
    return run_sweep_noop(trials, variant=variant.name, env=dict(variant.env))


def run(
    quick: bool = False,
    repeats: int | None = None,
    trials: int | None = None,
    only: Sequence[str] = (),
) -> dict[str, Any]:
    """Every variant (or ``only`` those), interleaved, compared with the shipped settings."""
    trials = trials or (40 if quick else 200)
    reps = repeats or (1 if quick else 3)
    chosen = [v for v in VARIANTS if not only or v.name in only or v.name == "raysweep"]
    runs = interleave(NAME, reps, {v.name: partial(run_variant, v, trials) for v in chosen})
    variants = {name: launch_metrics(launches, trials) for name, launches in runs.items()}
    figures = {}
    for key in (
        "fit_trials_per_s",
        "steady_trials_per_s",
        "first_trial_s",
        "fit_driver_cpu_ms_per_trial",
    ):
        base = variants["raysweep"][key]["median"]
        for name, metrics in variants.items():
            if name != "raysweep":
                figures[f"{name}: {key} / shipped"] = summarize(
                    ratio(v, base) for v in metrics[key]["values"]
                )
    params = {"trials": trials, "slots": 2, "repeats": reps}
    notes = [f"`{v.name}`: {v.what}" for v in chosen]
    return bench_result(TITLE, params, variants, [], runs, figures, notes=notes)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m benchmarks.run knobs [--quick] [--repeats N] [--only a,b]``."""
    from benchmarks.harness.cli import parser, run_and_report

    p: argparse.ArgumentParser = parser(__doc__.splitlines()[0], NAME)
    p.add_argument("--only", default="", help="comma-separated variant names")
    args = p.parse_args(argv)
    only = [x for x in args.only.split(",") if x]
    extra = ["--only", args.only] if only else []

    def run_selected(quick: bool, repeats: int | None, trials: int | None) -> dict[str, Any]:
        return run(quick=quick, repeats=repeats, trials=trials, only=only)

    return run_and_report(NAME, run_selected, args, extra)


if __name__ == "__main__":
    sys.exit(main())
