"""Lines a run prints before it starts: where trials pause, settings that defeat
themselves, and where the dashboard is."""

from __future__ import annotations

import getpass
import os
import socket

from raysweep._raycompat.private_name import parse_version
from raysweep._raycompat.startup_check import ray_version
from raysweep.config.schema import HyperbandScheduler, SweepSpec
from raysweep.engines.ray.ray_session import RayInfo
from raysweep.output_log import RunLog
from raysweep.rundir import RunDir
from raysweep.schedulers.build import pause_points
from raysweep.schedulers.hyperband import hyperband_largest_bracket
from raysweep.search.checks import search_warnings
from raysweep.trainables.builtins import BUILTIN_TRAINABLES


def run_notices(spec: SweepSpec) -> list[str]:
    """Every notice and warning for ``spec``, in the order printed."""
    found = (
        pause_notice(spec),
        hyperband_concurrency_warning(spec),
        hyperband_searcher_warning(spec),
        *search_warnings(spec),
    )
    return [line for line in found if line]


def pause_notice(spec: SweepSpec) -> str | None:
    """Where the scheduler pauses trials, and what a paused trial resumes from."""
    rungs = sorted(pause_points(spec))
    if not rungs:
        return None
    where = f"{spec.scheduler.type} pauses trials at iterations {', '.join(map(str, rungs))}"
    if spec.trainable in BUILTIN_TRAINABLES:
        return f"{where}; {spec.trainable} checkpoints there and resumes where it stopped"
    return (
        f"{where}; a paused trial resumes from the checkpoint it reported there "
        "(raysweep.trial_context().checkpoint_due(iteration)), else from iteration 1"
    )


def hyperband_concurrency_warning(spec: SweepSpec) -> str | None:
    """A warning when ``max_concurrent`` keeps Hyperband's brackets from filling."""
    limit = spec.search.max_concurrent
    if not isinstance(spec.scheduler, HyperbandScheduler) or limit is None:
        return None
    bracket = min(hyperband_largest_bracket(spec.scheduler), spec.search.num_samples)
    if limit >= bracket:
        return None
    return (
        f"warning: search.max_concurrent {limit} is below hyperband's largest bracket "
        f"({bracket} trials): its paused trials hold the limit, the bracket never fills and "
        "its trials are stopped late or not at all; leave max_concurrent unset (raysweep "
        "then admits every trial, and those beyond the free slots wait in the queue)"
    )


def hyperband_searcher_warning(spec: SweepSpec) -> str | None:
    """A warning when a model-based searcher gets every Hyperband trial before any result."""
    limit = spec.search.max_concurrent
    if spec.scheduler.type != "hyperband" or spec.search.algorithm not in (
        "optuna",
        "mf-tpe",
        "hyperopt",
    ):
        return None
    if limit is not None and limit < spec.search.num_samples:
        return None
    return (
        f"warning: hyperband admits all {spec.search.num_samples} trials at once, so "
        f"{spec.search.algorithm} suggests every configuration before any result and "
        "learns nothing from them (random search in effect); use the asha scheduler "
        f"to let {spec.search.algorithm} learn from the trials that finish"
    )


def dashboard_warning(host: str) -> str:
    """The warning for a dashboard bound beyond this machine."""
    return (
        f"WARNING: the Ray dashboard listens on {host}, reachable from other machines: "
        "anyone who can reach it and holds the token can submit jobs that run code here "
        "(docs/security.md); bind 127.0.0.1 and use an SSH tunnel instead"
    )


def announce_dashboard(run_dir: RunDir, ray: RayInfo, log: RunLog) -> None:
    """Print the dashboard's URL, how to reach it and authenticate; record it in state.json."""
    if ray.dashboard_url is None:
        return
    url = ray.dashboard_url
    port = url.rsplit(":", 1)[-1].strip("/")
    log.print(f"Ray dashboard: {url}")
    if ray.started_here:
        log.print(
            f"  from another machine: ssh -N -L {port}:127.0.0.1:{port} {_user_at_host()}, "
            f"then open http://127.0.0.1:{port}"
        )
    log.print(token_auth_line(ray.started_here))
    run_dir.update_state(dashboard_url=url)


# Ray turns token authentication on for a local ray.init from this release on
TOKEN_AUTH_DEFAULT_SINCE = (2, 59)


def token_auth_line(started_here: bool) -> str:
    """Whether the dashboard asks for Ray's token, as far as this process can tell."""
    how = "get the token with `ray get-auth-token` (clients send 'Authorization: Bearer <token>')"
    if not started_here:
        return f"  the cluster's own token authentication applies, if it was started with it: {how}"
    mode = os.environ.get("RAY_AUTH_MODE", "").strip().lower()
    if mode == "token" or (not mode and _release() >= TOKEN_AUTH_DEFAULT_SINCE):
        return f"  token authentication is on: {how}"
    return (
        f"  WARNING: token authentication is off (Ray {ray_version()}"
        + (f", RAY_AUTH_MODE={mode}" if mode else "")
        + "): whoever reaches the dashboard can submit jobs; keep it on 127.0.0.1, "
        "or set RAY_AUTH_MODE=token (docs/security.md)"
    )


def _release() -> tuple[int, int]:
    version = parse_version(ray_version())
    return (version[0], version[1]) if version else (0, 0)


def _user_at_host() -> str:
    return f"{getpass.getuser()}@{socket.getfqdn()}"
