"""6. Scale: 10,000 no-op trials (500 with --quick) through ``sweep run``.

Wall time; throughput of the last 1,000 trials over the first 1,000 (per-trial
end times from the run's ``trials.jsonl``; a window is a tenth of the trials
with --quick), which stays near 1 when nothing grows with the number of
results; the driver's peak RSS (psutil samples every 0.2 s, and getrusage at
exit); and the size of what raysweep appends per trial.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.harness.common import log, ratio, summarize, target
from benchmarks.harness.launch import Launch, launch_sweep, workdir
from benchmarks.suite.overhead import noop_config

NAME = "scale"
TITLE = "Scale"
# A run still going after this is killed; its throughput figures then cover the
# trials that finished (first window vs the last window before the kill).
TIMEOUT_S = 900


def end_times(run_dir: Path) -> list[float]:
    """Sorted end times (epoch s) of the finished trials in trials.jsonl."""
    out = []
    for line in (run_dir / "trials.jsonl").read_text(encoding="utf-8").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("event") in ("ended", "errored"):
            out.append(float(event["t"]))
    return sorted(out)


def window_rates(ends: list[float], window: int) -> tuple[float | None, float | None]:
    """Trials/s over the first and the last ``window`` trial ends."""
    if len(ends) < 2 * window or window < 2:
        return None, None
    first = (window - 1) / (ends[window - 1] - ends[0]) if ends[window - 1] > ends[0] else None
    last = (window - 1) / (ends[-1] - ends[-window]) if ends[-1] > ends[-window] else None
    return first, last


def _one(variant: str, trials: int, window: int, **kwargs: Any) -> tuple[Launch, dict[str, Any]]:
    with workdir(NAME) as tmp:
        config = noop_config(NAME, trials)
        launch = launch_sweep(variant, config, tmp, timeout=TIMEOUT_S, **kwargs)
        run_dir = Path(launch.run_dir or "")
        facts: dict[str, Any] = {"timed_out": "timed_out_after_s" in launch.extra}
        if (launch.returncode == 0 or facts["timed_out"]) and (run_dir / "trials.jsonl").is_file():
            ends = end_times(run_dir)
            first, last = window_rates(ends, window)
            events = run_dir / "trials.jsonl"
            facts = {
                "finished": len(ends),
                "first_throughput": first,
                "last_throughput": last,
                "throughput_ratio": ratio(last, first),
                "events_bytes_per_trial": events.stat().st_size / max(len(ends), 1),
            }
    return launch, facts


def _metrics(trials: int, items: list[tuple[Launch, dict[str, Any]]]) -> dict[str, Any]:
    ok = [(x, f) for x, f in items if x.returncode == 0 or f.get("timed_out")]
    return {
        "trials": trials,
        "runs": len(items),
        "failed_runs": len(items) - len(ok),
        "timed_out_runs": sum(1 for _, f in items if f.get("timed_out")),
        "finished": summarize(f.get("finished") for _, f in ok),
        "fit_s": summarize(x.fit_s for x, _ in ok),
        "process_s": summarize(x.process_s for x, _ in ok),
        "fit_trials_per_s": summarize(ratio(trials, x.fit_s) for x, _ in ok),
        "first_throughput": summarize(f.get("first_throughput") for _, f in ok),
        "last_throughput": summarize(f.get("last_throughput") for _, f in ok),
        "throughput_ratio": summarize(f.get("throughput_ratio") for _, f in ok),
        "driver_peak_rss_mb": summarize(x.driver_peak_rss_mb for x, _ in ok),
        "driver_maxrss_mb": summarize(x.driver_maxrss_mb for x, _ in ok),
        "events_bytes_per_trial": summarize(f.get("events_bytes_per_trial") for _, f in ok),
    }


def run(
    quick: bool = False, repeats: int | None = None, trials: int | None = None
) -> dict[str, Any]:
    """One big no-op sweep per repeat (and per variant)."""
    trials = trials or (500 if quick else 10_000)
    window = max(trials // 10, 2)
    reps = repeats or 1
    names = ["raysweep"]
    items: dict[str, list[tuple[Launch, dict[str, Any]]]] = {name: [] for name in names}
    for rep in range(reps):
        log(f"{NAME}: repeat {rep + 1}/{reps} ({trials} trials)")
        items["raysweep"].append(_one("raysweep", trials, window))
    variants = {name: _metrics(trials, pairs) for name, pairs in items.items()}
    targets = []
    for name, metrics in variants.items():
        label = "" if name == "raysweep" else f" ({name})"
        peaks = (metrics["driver_peak_rss_mb"]["max"], metrics["driver_maxrss_mb"]["max"])
        peak = max((v for v in peaks if v is not None), default=None)
        targets += [
            target(f"throughput, last {window} / first {window} trials{label}",
                   metrics["throughput_ratio"]["median"], ">=", 0.9),
            target(f"driver peak memory{label}", peak, "<", 2048, " MB"),
        ]  # fmt: skip
    return {
        "title": TITLE,
        "params": {"trials": trials, "window": window, "slots": 2, "repeats": reps},
        "variants": variants,
        "figures": {},
        "targets": targets,
        "per_run": [f for pairs in items.values() for _, f in pairs],
        "runs": {k: [x.to_json() for x, _ in v] for k, v in items.items()},
    }


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m benchmarks.run scale [--quick] [--repeats N]``."""
    from benchmarks.harness.cli import bench_main

    return bench_main(NAME, __doc__.splitlines()[0], run, argv)


if __name__ == "__main__":
    sys.exit(main())
