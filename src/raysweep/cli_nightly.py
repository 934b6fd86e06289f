"""``sweep history`` and ``sweep nightly pending|record|rotate``: the nightly service's commands.

nightly.sh calls the ``nightly`` steps (raysweep/nightly.py); ``sweep history``
reads what they recorded (raysweep/history.py). Argument parsing only, as in cli.py.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def _cmd_history(args: argparse.Namespace) -> int:
    from raysweep import history

    log_dir = Path(args.log_dir)
    if args.json:
        print(json.dumps(history.history_rows(log_dir), indent=2, default=str))
    else:
        print(history.history_text(log_dir))
    return 0


def _cmd_nightly_pending(args: argparse.Namespace) -> int:
    from raysweep.nightly import pending_run

    run_dir = pending_run(Path(args.log_dir))
    if run_dir is not None:
        print(run_dir.path)
    return 0


def _cmd_nightly_record(args: argparse.Namespace) -> int:
    from raysweep import nightly
    from raysweep.jsonio import write_json_atomic
    from raysweep.rundir import RunDir

    night = nightly.NightInput(
        log_dir=Path(args.log_dir),
        exit_code=args.exit_code,
        run_dir=RunDir(args.run) if args.run else None,
        reason=args.reason,
        started=args.started,
        regression_pct=args.regression_pct,
        log=Path(args.log) if args.log else None,
        resumed=args.resumed,
    )
    _line, payload = nightly.record_night(night)
    if args.payload:
        write_json_atomic(args.payload, payload)
    reason = payload["reason"] if payload["event"] == "regression" else None
    print(payload["event"] + (f": {reason}" if reason else ""))
    return 0


def _cmd_nightly_rotate(args: argparse.Namespace) -> int:
    from raysweep.nightly import rotate

    for path in rotate(Path(args.log_dir), args.keep_days):
        print(f"removed {path}")
    return 0


def add_nightly_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``sweep history`` and the ``sweep nightly`` plumbing that nightly.sh calls."""
    history = sub.add_parser(
        "history",
        help="night-by-night bests of nightly.sh (history.jsonl and the run directories)",
    )
    history.add_argument(
        "log_dir", nargs="?", default="sweep_logs", metavar="LOG_DIR", help="default: sweep_logs"
    )
    history.add_argument("--json", action="store_true", help="print JSON for scripts")
    history.set_defaults(func=_cmd_history)

    nightly = sub.add_parser("nightly", help="plumbing for nightly.sh (see docs/operations.md)")
    steps = nightly.add_subparsers(dest="step", required=True, metavar="STEP")
    pending = steps.add_parser(
        "pending", help="print the newest nightly_* run of LOG_DIR if it is unfinished"
    )
    pending.add_argument("log_dir", metavar="LOG_DIR")
    pending.set_defaults(func=_cmd_nightly_pending)
    record = steps.add_parser(
        "record",
        help="append the night to LOG_DIR/history.jsonl; print its event "
        "(succeeded, failed, or 'regression: WHY')",
    )
    record.add_argument("log_dir", metavar="LOG_DIR")
    record.add_argument("--exit-code", type=int, required=True, metavar="N")
    record.add_argument("--run", metavar="RUN_DIR", help="the night's run (none: failed before)")
    record.add_argument("--reason", metavar="TEXT", help="why the night failed")
    record.add_argument("--started", type=float, metavar="EPOCH", help="when the night started")
    record.add_argument("--regression-pct", type=float, default=5.0, metavar="P")
    record.add_argument("--log", metavar="FILE", help="the night's log (its tail is notified)")
    record.add_argument("--resumed", action="store_true", help="the night resumed an older run")
    record.add_argument("--payload", metavar="FILE", help="write the notification JSON here")
    record.set_defaults(func=_cmd_nightly_record)
    rotate = steps.add_parser(
        "rotate",
        help="delete nightly_* runs and logs older than --keep-days (never the newest "
        "successful run or an unfinished one)",
    )
    rotate.add_argument("log_dir", metavar="LOG_DIR")
    rotate.add_argument("--keep-days", type=float, required=True, metavar="DAYS")
    rotate.set_defaults(func=_cmd_nightly_rotate)
