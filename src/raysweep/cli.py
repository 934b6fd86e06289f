"""The ``sweep`` command: parses arguments and calls raysweep.api. No logic here."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from raysweep.cli_export import add_export_commands
from raysweep.cli_flags import add_cluster_flags, add_dashboard_flags
from raysweep.cli_legacy import add_legacy_commands
from raysweep.cli_nightly import add_nightly_commands
from raysweep.errors import INTERRUPTED, ConfigError, SweepError

if TYPE_CHECKING:
    from raysweep.api import RunOptions

EXECUTION_HELP = "ray (Ray Tune) or local (GBM on CPUs in this process, no Ray; docs/config.md)"
EPILOG = """exit codes: 0 done (at least one trial succeeded), 1 the sweep failed,
2 invalid input (nothing started, nothing written), 130 interrupted (resumable)"""
CLOSED_PIPE = 141  # 128 + SIGPIPE: what a command ended by a closed pipe exits with


def _cmd_run(args: argparse.Namespace) -> int:
    from raysweep.run.signals import GracefulStop

    with GracefulStop() as stop:  # before the heavy imports: a signal is never lost
        from raysweep import api

        return api.run_sweep(_run_options(args), stop=stop)


def _run_options(args: argparse.Namespace) -> RunOptions:
    from raysweep.api import RunOptions

    return RunOptions(
        config=Path(args.config),
        storage=args.storage,
        name=args.name,
        seed=args.seed,
        execution=args.execution,
        resume=args.resume,
        warm_start=Path(args.warm_start) if args.warm_start else None,
        **_shared_flags(args),
    )


def _shared_flags(args: argparse.Namespace) -> dict[str, Any]:
    """The RunOptions fields that ``sweep run`` and ``sweep resume`` both take."""
    return {
        "num_samples": args.num_samples,
        "max_concurrent": args.max_concurrent,
        "gpus": args.gpus,
        "allow_cpu": args.allow_cpu,
        "address": args.address,
        "connect_timeout": args.connect_timeout,
        "dashboard": args.dashboard,
        "dashboard_host": args.dashboard_host,
        "dashboard_port": args.dashboard_port,
        "working_dir": Path(args.working_dir) if args.working_dir else None,
        "dry_run": args.dry_run,
        "retry_errored": args.retry_errored,
    }


def _cmd_resume(args: argparse.Namespace) -> int:
    from raysweep.run.signals import GracefulStop

    with GracefulStop() as stop:
        from raysweep import api

        options = api.RunOptions(**_shared_flags(args))
        return api.resume_sweep(args.run_dir, options, stop=stop)


def _cmd_repro(args: argparse.Namespace) -> int:
    from raysweep import api

    return api.rerun_trial(args.run_dir, args.trial)


def _cmd_validate(args: argparse.Namespace) -> int:
    from raysweep import api
    from raysweep.config.load import spec_to_json

    spec = api.load_run_spec(api.RunOptions(config=Path(args.config)))
    notes = api.validation_notes(spec)
    print(json.dumps(spec_to_json(spec), indent=2))
    for note in notes:
        print(note, file=sys.stderr)
    print(f"ok: {spec.total_trials} trials", file=sys.stderr)
    return 0


def _cmd_schema(args: argparse.Namespace) -> int:
    from raysweep.config.load import json_schema

    print(json.dumps(json_schema(), indent=2))
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from raysweep import views
    from raysweep.rundir import HTML_REPORT, REPORT, RunDir

    run_dir = RunDir(args.run_dir).must_exist()
    print(views.report_text(run_dir), end="")
    print(f"wrote {run_dir.where(REPORT)} and {run_dir.where(HTML_REPORT)}", file=sys.stderr)
    return 0


def _cmd_best(args: argparse.Namespace) -> int:
    from raysweep import views
    from raysweep.rundir import RunDir

    if args.legacy and not args.export:
        raise ConfigError("--legacy: give the file to write with --export FILE")
    run_dir = RunDir(args.run_dir).must_exist()
    print(views.best_text(run_dir, top=args.top, export=args.export, legacy=args.legacy))
    return 0


def _cmd_status(args: argparse.Namespace) -> int:
    from raysweep import views
    from raysweep.rundir import RunDir

    run_dir = RunDir(args.run_dir).must_exist()
    if args.watch is not None:
        views.watch_status(run_dir, args.watch, sys.stdout)
    else:
        print(views.status_text(run_dir, as_json=args.json))
    return 0


def _cmd_list(args: argparse.Namespace) -> int:
    from raysweep import views

    print(views.list_text(args.storage))
    return 0


def _cmd_gpus(args: argparse.Namespace) -> int:
    from raysweep.gpu.inventory import read_inventory
    from raysweep.gpu.mps import gpus_text

    if args.require is not None:
        from raysweep.nightly import require_gpus

        inventory = require_gpus(args.require)
    else:
        inventory = read_inventory()
    print(gpus_text(inventory, args.json))  # with whether MPS (resources.gpu_sharing) can run
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``sweep`` command."""
    parser = argparse.ArgumentParser(
        prog="sweep",
        description="Reproducible, checkpointed hyperparameter sweeps on Ray Tune.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser("run", help="run a sweep from a sweep.json", epilog=EPILOG)
    run.add_argument("--config", required=True, metavar="FILE", help="the sweep.json to run")
    run.add_argument(
        "--gpus",
        metavar="IDS",
        help="physical GPUs to use: '0,1,2,3', 'all' or 'none' (default: all "
        "GPUs when the config asks for any)",
    )
    run.add_argument(
        "--allow-cpu",
        action="store_true",
        help="run a GPU config on CPUs when no NVIDIA GPU is found",
    )
    run.add_argument("--name", help="run name (default: the config's name)")
    run.add_argument(
        "--storage",
        default="runs",
        metavar="DIR|URI",
        help="where run directories live: a directory (default: ./runs; a shared filesystem "
        "on a cluster) or a URI Ray Tune supports (s3://bucket/prefix, gs://bucket/prefix); "
        "checked at start, docs/cluster.md",
    )
    run.add_argument("--seed", type=int, help="master seed (overrides the config's)")
    run.add_argument("--execution", choices=("ray", "local"), help=EXECUTION_HELP)
    run.add_argument("--num-samples", type=int, metavar="N", help="override search.num_samples")
    run.add_argument(
        "--max-concurrent", type=int, metavar="N", help="override search.max_concurrent"
    )
    add_cluster_flags(run)
    add_dashboard_flags(run)
    run.add_argument(
        "--resume",
        action="store_true",
        help="continue the run of the same name if it exists (the config must "
        "match its spec.json); start it otherwise",
    )
    run.add_argument(
        "--retry-errored",
        action="store_true",
        help="with --resume: rerun errored trials from their last checkpoint "
        "(default: keep them as errored)",
    )
    run.add_argument(
        "--warm-start",
        metavar="FILE",
        help="evaluate the configurations of FILE (a 'sweep best --export' file) first, "
        "then let the searcher propose (random, optuna, hyperopt; grid ignores it)",
    )
    run.add_argument(
        "--dry-run",
        action="store_true",
        help="validate and print the plan; start nothing, write nothing",
    )
    run.set_defaults(func=_cmd_run)

    resume = sub.add_parser("resume", help="continue an interrupted or crashed run", epilog=EPILOG)
    resume.add_argument("run_dir", metavar="RUN_DIR")
    resume.add_argument(
        "--gpus", metavar="IDS", help="physical GPUs to use (may differ from the first run)"
    )
    resume.add_argument("--allow-cpu", action="store_true")
    resume.add_argument(
        "--num-samples",
        type=int,
        metavar="N",
        help="grow search.num_samples to N; only the extra trials run (in RUN_DIR/tune-ext-K/)",
    )
    resume.add_argument(
        "--max-concurrent",
        type=int,
        metavar="N",
        help="change search.max_concurrent for this resume",
    )
    add_cluster_flags(resume)
    add_dashboard_flags(resume)
    resume.add_argument(
        "--retry-errored",
        action="store_true",
        help="rerun errored trials from their last checkpoint (default: keep them as errored)",
    )
    resume.add_argument(
        "--dry-run",
        action="store_true",
        help="check the run directory and print what would run; change nothing",
    )
    resume.set_defaults(func=_cmd_resume)

    repro = sub.add_parser("repro", help="rerun a recorded trial and compare its metric")
    repro.add_argument("run_dir", metavar="RUN_DIR")
    repro.add_argument("--trial", metavar="ID", help="trial id (default: the best trial)")
    repro.set_defaults(func=_cmd_repro)

    validate = sub.add_parser(
        "validate",
        help="validate a sweep.json and print the resolved spec",
        description="Checks the config, the trainable and its data; prints the resolved spec "
        "(JSON, on stdout) and, on stderr, what the trainable knows about its data (trading: "
        "bars, span, gaps, folds), warnings, and what the same seed repeats.",
    )
    validate.add_argument("--config", required=True, metavar="FILE")
    validate.set_defaults(func=_cmd_validate)

    schema = sub.add_parser("schema", help="print the JSON Schema of sweep.json")
    schema.set_defaults(func=_cmd_schema)

    status = sub.add_parser(
        "status",
        help="progress of a live or finished run (reads the run directory only)",
        description="Trials running, pending, completed, stopped early and errored; the best "
        "so far with its config; elapsed time and an ETA for a live run; the dashboard URL.",
    )
    status.add_argument("run_dir", metavar="RUN_DIR")
    status.add_argument("--json", action="store_true", help="print JSON for scripts")
    status.add_argument(
        "--watch",
        nargs="?",
        type=float,
        const=2.0,
        metavar="SECONDS",
        help="refresh every SECONDS (default 2) until the run stops running",
    )
    status.set_defaults(func=_cmd_status)

    lst = sub.add_parser("list", help="list the runs under a storage directory or URI")
    lst.add_argument("--storage", default="runs", metavar="DIR|URI")
    lst.set_defaults(func=_cmd_list)

    report = sub.add_parser(
        "report",
        help="regenerate report.txt and report.html from the run directory; print report.txt",
    )
    report.add_argument("run_dir", metavar="RUN_DIR")
    report.set_defaults(func=_cmd_report)

    best = sub.add_parser("best", help="print the best trial(s) of a run")
    best.add_argument("run_dir", metavar="RUN_DIR")
    best.add_argument("--top", type=int, default=1, metavar="K", help="show the K best trials")
    best.add_argument(
        "--export",
        metavar="FILE",
        help="also write FILE atomically: the best trial's fields (trial_id, metric, mode, "
        "value, config), plus configurations and values of the top K (best first), run "
        "and generated_at",
    )
    best.add_argument(
        "--legacy",
        action="store_true",
        help="with --export, a trading sweep's best in the previous tool's shape: "
        "configurations, entry_model, trading_params, metrics (docs/trading.md)",
    )
    best.set_defaults(func=_cmd_best)

    gpus = sub.add_parser("gpus", help="GPU inventory through NVML; whether MPS can run")
    gpus.add_argument("--json", action="store_true", help="print JSON")
    gpus.add_argument(
        "--require",
        metavar="IDS",
        help="exit 2 unless these GPUs exist ('0,1', 'all' for at least one, 'none')",
    )
    gpus.set_defaults(func=_cmd_gpus)
    add_nightly_commands(sub)
    add_legacy_commands(sub)
    add_export_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``sweep`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        return func(args)
    except SweepError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return INTERRUPTED
    except BrokenPipeError:  # the reader went away (sweep status RUN | head -3)
        _drop_stdout()
        return CLOSED_PIPE
    finally:
        _stop_own_ray()


def _drop_stdout() -> None:
    """Send what is left for stdout nowhere, so the exit's flush raises nothing."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def console(argv: Sequence[str] | None = None) -> None:
    """The ``sweep`` console script: :func:`main`, then a prompt exit (``prompt_exit``)."""
    from raysweep.prompt_exit import exit_now

    exit_now(main(argv))


def _stop_own_ray() -> None:
    """Shut down a Ray the command started, now rather than in Ray's slower exit hook."""
    session = sys.modules.get("raysweep.engines.ray.ray_session")
    if session is not None:  # never imported: no Ray was started
        session.stop_ray()


if __name__ == "__main__":
    console()
