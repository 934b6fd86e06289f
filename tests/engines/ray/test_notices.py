"""The dashboard's authentication line says what this Ray really does."""

from __future__ import annotations

import pytest

from raysweep.engines.ray import notices


@pytest.mark.parametrize(
    ("mode", "release", "on"),
    [
        ("", (2, 60), True),  # Ray >= 2.59 turns it on for a local ray.init
        ("", (2, 58), False),  # an older supported Ray leaves it off
        ("token", (2, 58), True),
        ("disabled", (2, 60), False),
    ],
)
def test_the_token_line_follows_the_release_and_ray_auth_mode(
    monkeypatch: pytest.MonkeyPatch, mode: str, release: tuple[int, int], on: bool
) -> None:
    monkeypatch.setenv("RAY_AUTH_MODE", mode)
    monkeypatch.setattr(notices, "_release", lambda: release)
    line = notices.token_auth_line(started_here=True)
    if on:
        assert line.startswith("  token authentication is on: get the token with")
    else:
        assert line.startswith("  WARNING: token authentication is off (Ray ")
        assert "RAY_AUTH_MODE=token" in line
        assert ("RAY_AUTH_MODE=disabled)" in line) == (mode == "disabled")


def test_a_joined_cluster_is_not_claimed_to_use_a_token() -> None:
    line = notices.token_auth_line(started_here=False)
    assert "the cluster's own token authentication applies" in line


def test_the_installed_release_is_read() -> None:
    major, minor = notices._release()
    assert (major, minor) >= (2, 58)
