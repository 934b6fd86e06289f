"""The flags ``sweep run`` and ``sweep resume`` share: the cluster to join and the dashboard.

Argument parsing only, as in cli.py.
"""

from __future__ import annotations

import argparse


def add_cluster_flags(parser: argparse.ArgumentParser) -> None:
    """--address, --connect-timeout and --working-dir (docs/cluster.md)."""
    parser.add_argument(
        "--address",
        metavar="ADDR",
        help="join an existing Ray cluster ('auto', HOST:PORT or ray://HOST:10001; default: "
        "RAY_ADDRESS when set, else start a local Ray). A cluster started with "
        "RAY_AUTH_MODE=token needs its token here too: RAY_AUTH_MODE=token and "
        "RAY_AUTH_TOKEN_PATH or RAY_AUTH_TOKEN (docs/cluster.md)",
    )
    parser.add_argument(
        "--connect-timeout",
        type=float,
        metavar="SECONDS",
        help="give up joining the cluster after SECONDS: exit 2 naming the address and the "
        "likely causes, nothing written (default: RAYSWEEP_CONNECT_TIMEOUT_S, else 60)",
    )
    parser.add_argument(
        "--working-dir",
        metavar="DIR",
        help="with a cluster: ship DIR (data files, configs, code) to every node, first on "
        "its import path; files the config names inside it are found there (default: the "
        "folder of a trainable module that is not installed, docs/cluster.md)",
    )


def add_dashboard_flags(parser: argparse.ArgumentParser) -> None:
    """--dashboard/--no-dashboard, --dashboard-host and --dashboard-port (docs/security.md)."""
    parser.add_argument(
        "--dashboard",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="start the Ray dashboard with a local Ray (default: on, bound to 127.0.0.1, "
        "when Ray's 'default' extra is installed, else off with a one-line note; "
        "--dashboard requires it (exit 2 without it); --no-dashboard starts none)",
    )
    parser.add_argument(
        "--dashboard-host",
        default="127.0.0.1",
        metavar="HOST",
        help="dashboard bind address (default 127.0.0.1; any other address is reachable "
        "from other machines and is warned about)",
    )
    parser.add_argument(
        "--dashboard-port",
        type=int,
        default=None,
        metavar="PORT",
        help="dashboard port (default: 8265, or the next free one, which the dashboard "
        "finds itself, so sweeps started at the same moment never collide; a port given "
        "here that is taken moves to the next free one)",
    )
