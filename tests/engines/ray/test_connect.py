"""Joining a cluster: the address's endpoint, the time limit's settings, the messages.

What happens on the wire is tested against real sockets here and real clusters in
tests/e2e/test_cluster_unreachable.py and tests/e2e/test_cluster_token.py.
"""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

from factories import FullPort, SilentPort
from raysweep.engines.environment import (
    CONNECT_TIMEOUT_ENV,
    DEFAULT_CONNECT_TIMEOUT_S,
    connect_timeout_s,
)
from raysweep.engines.ray.connect import (
    ClusterUnreachableError,
    Endpoint,
    join_within,
    token_refused,
)
from raysweep.errors import ConfigError

TOKEN = "0123456789abcdef" * 4


@pytest.mark.parametrize(
    ("address", "endpoint"),
    [
        ("10.0.0.5:6379", Endpoint("10.0.0.5", 6379, gcs=True)),
        ("head.lan:6380", Endpoint("head.lan", 6380, gcs=True)),
        ("ray://10.0.0.5:10001", Endpoint("10.0.0.5", 10001, gcs=False)),
        ("[::1]:6379", Endpoint("::1", 6379, gcs=True)),
        ("auto", None),
        ("local", None),
        ("10.0.0.5", None),
    ],
)
def test_the_endpoint_of_an_address(address: str, endpoint: Endpoint | None) -> None:
    assert Endpoint.of(address) == endpoint


def test_the_time_limit_comes_from_the_flag_then_the_variable_then_60_s(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(CONNECT_TIMEOUT_ENV, raising=False)
    assert connect_timeout_s(None) == DEFAULT_CONNECT_TIMEOUT_S == 60
    monkeypatch.setenv(CONNECT_TIMEOUT_ENV, "7.5")
    assert connect_timeout_s(None) == 7.5
    assert connect_timeout_s(3) == 3


@pytest.mark.parametrize("value", ["soon", "0", "-1", "nan", "inf"])
def test_a_bad_time_limit_is_refused_naming_it(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(CONNECT_TIMEOUT_ENV, value)
    with pytest.raises(ConfigError, match=f"{CONNECT_TIMEOUT_ENV}={value}: expected a number"):
        connect_timeout_s(None)


def test_nothing_listening_is_named_at_once() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nothing listens there
    with pytest.raises(ClusterUnreachableError) as caught:
        join_within(f"127.0.0.1:{port}", 30, lambda: pytest.fail("ray.init was called"))
    first = str(caught.value).splitlines()[0]
    assert first == (
        f"cannot join the Ray cluster at 127.0.0.1:{port}: nothing listens on 127.0.0.1 "
        f"port {port} (connection refused)."
    )
    assert "a firewall" in str(caught.value) and "Ray" in str(caught.value)


def test_an_address_that_never_answers_gives_up_at_the_limit() -> None:
    release = threading.Event()
    began = time.monotonic()
    with (
        SilentPort() as silent,
        pytest.raises(ClusterUnreachableError, match=r"no Ray cluster answered in 0\.5 s"),
    ):
        join_within(f"ray://{silent.address}", 0.5, lambda: release.wait(60))
    assert time.monotonic() - began < 30  # a guard: the limit is 0.5 s
    release.set()


def test_an_address_that_drops_connections_gives_up_at_the_limit_naming_it() -> None:
    with FullPort() as dropping, pytest.raises(ClusterUnreachableError) as caught:
        join_within(dropping.address, 1, lambda: pytest.fail("ray.init was called"))
    host, port = dropping.address.split(":")
    assert (
        f"{host} port {port} never answered the connection (it timed out)"
        in str(caught.value).splitlines()[0]
    )


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({}, "this client sends none (RAY_AUTH_MODE is not 'token' here)"),
        ({"RAY_AUTH_TOKEN": TOKEN}, "this client sends none (RAY_AUTH_MODE is not 'token' here)"),
        ({"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": TOKEN}, "(from RAY_AUTH_TOKEN)"),
        ({"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": "FILE"}, "(from RAY_AUTH_TOKEN_PATH="),
        ({"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": "/nonexistent"}, "no readable"),
        ({"RAY_AUTH_MODE": "token"}, "no token for 10.0.0.5:6379 (none in RAY_AUTH_TOKEN"),
    ],
    ids=["no mode", "token, no mode", "env", "file", "no file", "nothing"],
)
def test_the_token_message_names_the_source_never_the_token(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, env: dict[str, str], named: str
) -> None:
    home = tmp_path
    token_file = home / "token"
    token_file.write_text(TOKEN)
    for name in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))  # no ~/.ray/auth_token
    for name, value in env.items():
        monkeypatch.setenv(name, str(token_file) if value == "FILE" else value)
    message = token_refused("10.0.0.5:6379")
    assert named in message.splitlines()[0]
    assert "export RAY_AUTH_MODE=token" in message and "ray get-auth-token" in message
    assert TOKEN not in message
