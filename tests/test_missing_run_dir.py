"""A command given a run directory that does not exist says so in one line and exits 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from raysweep.cli import main

COMMANDS = [
    ("status",),
    ("status", "--json"),
    ("status", "--watch", "1"),
    ("resume",),
    ("resume", "--address", "127.0.0.1:1"),
    ("best",),
    ("best", "--export", "best.json"),
    ("report",),
    ("repro",),
    ("export-optuna", "--storage", "sqlite:///study.db"),
]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_missing_run_directory_is_named_in_one_line_exit_2(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: tuple[str, ...],
) -> None:
    monkeypatch.chdir(tmp_path)
    missing = tmp_path / "runs" / "no-such-run"
    name, *flags = command
    assert main([name, str(missing), *flags]) == 2
    out, err = capsys.readouterr()
    assert err == f"error: no such run directory: {missing}\n", err
    assert out == ""
    assert list(tmp_path.iterdir()) == []  # nothing written, the parent not made either
