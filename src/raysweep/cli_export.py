"""``sweep export-optuna``: a run directory as an Optuna study (docs/reports.md).

The conversion is ``raysweep.report.optuna_export``; argument parsing only, as in cli.py.
"""

from __future__ import annotations

import argparse
from typing import Any


def _cmd_export_optuna(args: argparse.Namespace) -> int:
    from raysweep.report.optuna_export import export_optuna
    from raysweep.rundir import RunDir

    print(export_optuna(RunDir(args.run_dir).must_exist(), args.storage, args.study_name))
    return 0


def add_export_commands(sub: Any) -> None:
    """Add ``export-optuna`` to the ``sweep`` command's subparsers."""
    optuna = sub.add_parser(
        "export-optuna",
        help="write a run's trials as an Optuna study (optuna-dashboard opens it)",
        description="Completed trials become COMPLETE with their final value, early-stopped "
        "ones PRUNED, errored ones FAIL; each with its params, the distributions of the "
        "spec's space and its metric per iteration as intermediate values.",
    )
    optuna.add_argument("run_dir", metavar="RUN_DIR")
    optuna.add_argument(
        "--storage",
        required=True,
        metavar="URL",
        help="an SQLAlchemy URL (sqlite:///study.db) or the path of a JournalStorage file",
    )
    optuna.add_argument("--study-name", metavar="NAME", help="default: the run's name")
    optuna.set_defaults(func=_cmd_export_optuna)
