"""Knobs: what each Ray setting in ``runner/tuning.py`` is worth.

The no-op sweep of the overhead benchmark, once per variant, interleaved
repeat by repeat. A variant is environment overrides: a Ray env var set to
Ray's own default undoes the matching raysweep default.

    python -m benchmarks.knobs [--quick] [--repeats N] [--only NAME,NAME]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks.common import log, ratio, summarize
from benchmarks.launch import Launch
from benchmarks.overhead import launch_metrics, run_sweep_noop

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
    Variant("raysweep", "settings as shipped (runner/tuning.py)"),
    Variant(
        "ray_loggers_on",
        "TUNE_DISABLE_AUTO_CALLBACK_LOGGERS=0: Ray's CSV + TensorBoard loggers back",
        env={"TUNE_DISABLE_AUTO_CALLBACK_LOGGERS": "0"},
    ),
    Variant(
        "ray_new_output",
        "RAY_AIR_NEW_OUTPUT=1: Ray's new console output engine",
        env={"RAY_AIR_NEW_OUTPUT": "1"},
    ),
    Variant(
        "ray_prestart_on",
        "RAY_prestart_worker_first_driver=1: Ray prestarts idle workers Tune never uses",
        env={"RAY_prestart_worker_first_driver": "1"},
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
    runs: dict[str, list[Launch]] = {v.name: [] for v in chosen}
    for rep in range(reps):
        log(f"{NAME}: repeat {rep + 1}/{reps}")
        for variant in chosen:
            runs[variant.name].append(run_variant(variant, trials))
    variants = {name: launch_metrics(launches, trials) for name, launches in runs.items()}
    figures = {}
    for key in ("fit_trials_per_s", "steady_trials_per_s", "first_trial_s"):
        base = variants["raysweep"][key]["median"]
        for name, metrics in variants.items():
            if name != "raysweep":
                figures[f"{name}: {key} / shipped"] = summarize(
                    ratio(v, base) for v in metrics[key]["values"]
                )
    return {
        "title": TITLE,
        "params": {"trials": trials, "slots": 2, "repeats": reps},
        "variants": variants,
        "figures": figures,
        "targets": [],
        "notes": [f"`{v.name}`: {v.what}" for v in chosen],
        "runs": {k: [x.to_json() for x in v] for k, v in runs.items()},
    }


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m benchmarks.knobs [--quick] [--repeats N] [--only a,b]``."""
    from benchmarks.cli import enable_proposed, parser, refresh_markdown, run_one

    p: argparse.ArgumentParser = parser(__doc__.splitlines()[0])
    p.add_argument("--only", default="", help="comma-separated variant names")
    args = p.parse_args(argv)
    enable_proposed(args)
    only = [x for x in args.only.split(",") if x]
    extra = ["--only", args.only] if only else []

    def run_selected(quick: bool, repeats: int | None, trials: int | None) -> dict[str, Any]:
        return run(quick=quick, repeats=repeats, trials=trials, only=only)

    result = run_one(
        NAME,
        run_selected,
        quick=args.quick,
        repeats=args.repeats,
        results_dir=args.results_dir,
        trials=args.trials,
        extra_args=extra,
    )
    if not args.quick and not args.no_md:
        refresh_markdown(args.markdown, args.results_dir, [result])
    from benchmarks.markdown import render_summary

    print(render_summary(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
