"""Joining a Ray cluster within a bounded time, ended at once by a signal, the cause named.

``ray.init(address=...)`` where no cluster answers retried for more than 12
minutes (Ray 2.60, 127.0.0.1:1: 40 s per attempt in native code, 20 attempts)
and ignored SIGTERM all along; a cluster that wants a token refused a client
without one only after 20 s of retries, in a ``ConnectionError`` traceback.
So, within one deadline (``--connect-timeout``, else ``RAYSWEEP_CONNECT_TIMEOUT_S``,
else 60 s), each step in a thread this process can walk away from (``run/bounded.py``):

1. a TCP connection to the address: nothing listening, an unknown host or a
   firewall are known in milliseconds (or at the deadline, for a firewall that
   drops packets);
2. for a GCS address, one handshake with Ray's own client
   (``_raycompat/gcs_handshake.py``): a missing or refused token, at once;
3. ``ray.init`` itself.

Any of them failing exits 2 naming the address and the likely causes, before
anything is written; SIGINT/SIGTERM meanwhile ends the command with 130.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from raysweep.engines.environment import CONNECT_TIMEOUT_ENV, DEFAULT_CONNECT_TIMEOUT_S
from raysweep.errors import ConfigError
from raysweep.run.bounded import DeadlinePassed, call_before

T = TypeVar("T")
TIMEOUT_SETTING = f"--connect-timeout SECONDS or {CONNECT_TIMEOUT_ENV}"
NOTHING_WRITTEN = "Nothing was started or written"


class ClusterUnreachableError(ConfigError):
    """No Ray cluster answered at the address in time (exit 2, nothing written)."""


class ClusterTokenError(ConfigError):
    """The cluster wants Ray's auth token and this client has none or another (exit 2)."""


@dataclass(frozen=True)
class Endpoint:
    """Where an address points: host and port, and whether a GCS should answer there."""

    host: str
    port: int
    gcs: bool

    @staticmethod
    def of(address: str) -> Endpoint | None:
        """``HOST:PORT`` (a GCS) or ``SCHEME://HOST:PORT``; None for ``auto`` and the like."""
        scheme, sep, rest = address.partition("://")
        if not sep:
            scheme, rest = "", address
        host, colon, port = rest.split("/")[0].rpartition(":")
        if not colon or not port.isdigit():
            return None
        return Endpoint(host.strip("[]"), int(port), gcs=not scheme)


def join_within(address: str, timeout_s: float, init: Callable[[], T]) -> T:
    """``init()`` (``ray.init`` on ``address``) once the address answers, all within ``timeout_s``.

    ClusterUnreachableError or ClusterTokenError (exit 2) with the cause;
    ``Interrupted`` on a signal. Ray's other errors (another Ray version) pass through.
    """
    deadline = time.monotonic() + timeout_s
    where = Endpoint.of(address)
    waiting = "no Ray cluster answered"  # what a deadline passed in the current step means
    try:
        if where is not None:
            waiting = _no_answer(where)
            call_before(deadline, lambda: _listening(address, where, deadline), "raysweep-probe")
            waiting = "something accepts connections there, but no Ray cluster answered"
            if where.gcs:
                call_before(
                    deadline, lambda: _handshake(address), "raysweep-handshake", quiet_stderr=True
                )
        return call_before(deadline, init, "raysweep-connect")
    except DeadlinePassed:
        symptom = f"{waiting} in {timeout_s:g} s"
        raise ClusterUnreachableError(unreachable(address, symptom)) from None
    except ConnectionError as exc:  # ray.init's own refusal
        text = _chain_text(exc)
        if "AuthenticationError" in text or "InvalidAuthToken" in text:
            raise ClusterTokenError(token_refused(address)) from None
        raise ClusterUnreachableError(unreachable(address, _first_line(exc))) from None


def _no_answer(where: Endpoint) -> str:
    return f"{where.host} port {where.port} never answered the connection (it timed out)"


def _listening(address: str, where: Endpoint, deadline: float) -> None:
    """A TCP connection to ``where`` (ClusterUnreachableError naming what went wrong)."""
    try:
        with socket.create_connection(
            (where.host, where.port), timeout=max(deadline - time.monotonic(), 0.1)
        ):
            return
    except socket.gaierror as exc:
        symptom = f"the host name {where.host!r} does not resolve ({exc.strerror})"
    except ConnectionRefusedError:
        symptom = f"nothing listens on {where.host} port {where.port} (connection refused)"
    except TimeoutError:
        symptom = _no_answer(where)
    except OSError as exc:
        symptom = f"{where.host} port {where.port}: {exc.strerror or exc}"
    raise ClusterUnreachableError(unreachable(address, symptom))


def _handshake(address: str) -> None:
    """Ray's GCS handshake: ClusterTokenError for a token problem, else ClusterUnreachableError."""
    from ray.exceptions import AuthenticationError

    from raysweep._raycompat.gcs_handshake import gcs_handshake

    try:
        gcs_handshake(address)
    except AuthenticationError:
        raise ClusterTokenError(token_refused(address)) from None
    except Exception as exc:  # Ray's client waited for a GCS in vain: ray.init would too
        symptom = f"something listens there, but no Ray GCS answered ({_first_line(exc)})"
        raise ClusterUnreachableError(unreachable(address, symptom)) from None


def unreachable(address: str, symptom: str) -> str:
    """No cluster at ``address``: what was seen first (one line), then the likely causes."""
    return (
        f"cannot join the Ray cluster at {address}: {symptom}.\n"
        "Likely causes: nothing listens there (the cluster is down, or the host or port is "
        "wrong: a head's GCS listens on port 6379 unless `ray start --head --port` chose "
        "another; Ray Client is ray://HOST:10001); a firewall between this machine and the "
        "head; or a cluster on a Ray this driver's Ray cannot talk to (docs/cluster.md, "
        "'The cluster's Ray').\n"
        f"The wait is bounded by {TIMEOUT_SETTING} (default {DEFAULT_CONNECT_TIMEOUT_S:g} s). "
        f"{NOTHING_WRITTEN}."
    )


def token_refused(address: str) -> str:
    """The cluster wants a token this client does not send: why, and how to give it."""
    return (
        f"{_token_problem(address)}.\n"
        "Give this client the cluster's token (`ray get-auth-token` on the head prints it):\n"
        "  export RAY_AUTH_MODE=token\n"
        "  export RAY_AUTH_TOKEN_PATH=/path/to/token   # a file only you can read (chmod 600)\n"
        "or RAY_AUTH_TOKEN=<token> instead of the file. "
        f"{NOTHING_WRITTEN} (docs/cluster.md, 'Token authentication')."
    )


def _token_problem(address: str) -> str:
    """The first line: what this client sends (by where its token comes from, never the token)."""
    wants = f"the Ray cluster at {address} requires its auth token (Ray's token authentication)"
    if os.environ.get("RAY_AUTH_MODE", "").strip().lower() != "token":
        return f"{wants} and this client sends none (RAY_AUTH_MODE is not 'token' here)"
    if os.environ.get("RAY_AUTH_TOKEN"):
        return f"{wants} and refused the token this client sends (from RAY_AUTH_TOKEN)"
    path = os.environ.get("RAY_AUTH_TOKEN_PATH")
    if path and _holds_text(path):
        return f"{wants} and refused the token this client sends (from RAY_AUTH_TOKEN_PATH={path})"
    if path:
        return (
            f"RAY_AUTH_TOKEN_PATH={path} names no readable, non-empty file: this client has "
            f"no token for {address}"
        )
    home = os.path.join("~", ".ray", "auth_token")
    if os.path.isfile(os.path.expanduser(home)):
        return f"{wants} and refused the token this client sends (from {home})"
    return (
        f"RAY_AUTH_MODE=token is set here but this client has no token for {address} "
        f"(none in RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH or {home})"
    )


def _holds_text(path: str) -> bool:
    """Whether ``path`` is a readable file with something in it (what it holds stays here)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            return bool(file.read().strip())
    except OSError:
        return False


def _chain_text(exc: BaseException) -> str:
    parts: list[str] = []
    current: BaseException | None = exc
    while current is not None and len(parts) < 8:
        parts.append(f"{type(current).__name__}: {current}")
        current = current.__cause__ or current.__context__
    return "\n".join(parts)


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0].rstrip(".")
