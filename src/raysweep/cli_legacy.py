"""``sweep import-legacy``: the previous tool's sweep template as a sweep.json (docs/trading.md).

The conversion is ``raysweep.config.legacy``; the result is checked as ``sweep
validate`` checks a file. Argument parsing only, as in cli.py.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from raysweep.errors import ConfigError


def _cmd_import_legacy(args: argparse.Namespace) -> int:
    from raysweep.config import legacy
    from raysweep.config.load import parse_spec
    from raysweep.jsonio import write_text_atomic
    from raysweep.trainables.checks import check_trainable

    name = args.name or (Path(args.output).stem if args.output else "legacy")
    conversion = legacy.convert(
        legacy.read_template(Path(args.file)), name, args.data, args.num_samples
    )
    for note in conversion.notes:
        print(f"mapped: {note}", file=sys.stderr)
    try:
        check_trainable(parse_spec(conversion.sweep, source="converted sweep.json"))
    except ConfigError as exc:
        raise ConfigError(legacy.explain(str(exc))) from None
    text = json.dumps(conversion.sweep, indent=2) + "\n"
    if args.output:
        write_text_atomic(Path(args.output), text)
        print(f"wrote {args.output}; run it: sweep run --config {args.output}", file=sys.stderr)
    else:
        print(text, end="")
    return 0


def add_legacy_commands(sub: Any) -> None:
    """Register ``sweep import-legacy`` on the ``sweep`` command's subparsers."""
    legacy = sub.add_parser(
        "import-legacy",
        help="convert the previous tool's sweep template into a sweep.json (trading)",
        description="Reads the template (JSON with // comments), prints each mapping it makes "
        "and refuses (exit 2, naming the key) what it cannot map. docs/trading.md.",
    )
    legacy.add_argument("file", metavar="FILE", help="the legacy template")
    legacy.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
    legacy.add_argument("--name", help="the sweep's name (default: the output file's stem)")
    legacy.add_argument(
        "--data",
        default="synthetic",
        help="trainable_args.data: a .csv/.parquet file of OHLCV bars (default: synthetic)",
    )
    legacy.add_argument(
        "--num-samples",
        type=int,
        metavar="N",
        help="trials (default: hyperband.iterations, else 20)",
    )
    legacy.set_defaults(func=_cmd_import_legacy)
