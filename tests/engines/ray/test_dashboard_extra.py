"""The dashboard choice: on where Ray's ``default`` extra is installed, a note where not."""

from __future__ import annotations

import sys

import pytest

from raysweep.engines.ray.dashboard_extra import (
    INSTALL,
    OPTIONAL_DEPS,
    choose_dashboard,
    missing_dashboard_module,
)
from raysweep.errors import ConfigError


def _without(monkeypatch: pytest.MonkeyPatch, module: str) -> None:
    """Make ``module`` one that Python refuses to import, as if it were not installed."""
    monkeypatch.delitem(sys.modules, OPTIONAL_DEPS, raising=False)
    monkeypatch.setitem(sys.modules, module, None)


def test_with_the_extra_installed_the_dashboard_starts_unless_refused() -> None:
    assert missing_dashboard_module() is None  # the dev install has ray[default]
    assert choose_dashboard(None, None).include
    assert choose_dashboard(True, None).include
    assert not choose_dashboard(False, None).include
    assert choose_dashboard(None, None).note is None


def test_a_missing_extra_is_a_one_line_note_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    _without(monkeypatch, "aiohttp_cors")
    assert missing_dashboard_module() == "aiohttp_cors"
    choice = choose_dashboard(None, None)
    assert not choice.include
    assert choice.note is not None and "\n" not in choice.note
    assert INSTALL in choice.note and "aiohttp_cors" in choice.note


def test_an_explicit_dashboard_without_the_extra_is_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    _without(monkeypatch, "opencensus")
    with pytest.raises(ConfigError, match=r"--dashboard: .*pip install 'ray\[default\]'") as err:
        choose_dashboard(True, None)
    assert err.value.exit_code == 2
    assert not choose_dashboard(False, None).include  # --no-dashboard: nothing to check


def test_a_cluster_runs_its_own_dashboard(monkeypatch: pytest.MonkeyPatch) -> None:
    _without(monkeypatch, "aiohttp_cors")
    choice = choose_dashboard(True, "127.0.0.1:6379")
    assert not choice.include and choice.note is None
