"""What of a user's code travels to a cluster (engines/ray/shipping.py), and the version message."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from raysweep.engines.ray import shipping
from raysweep.engines.ray.preflight import Versions, mismatch_message
from raysweep.engines.ray.shipping import plan_shipment


@pytest.fixture()
def project(tmp_path: Path) -> Iterator[Path]:
    """A folder with a trainable module and its sibling, on sys.path like a user's project."""
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "ship_train.py").write_text("import ship_features\n\ndef fit(config):\n    pass\n")
    (proj / "ship_features.py").write_text("")
    sys.path.insert(0, str(proj))
    yield proj
    sys.path.remove(str(proj))


def test_the_trainables_folder_travels_without_what_stays_behind(project: Path) -> None:
    shipment = plan_shipment("ship_train:fit", None, project / "runs")
    assert shipment.working_dir == str(project.resolve())
    assert shipment.py_modules == ()
    assert ".git" in shipment.excludes and ".venv*" in shipment.excludes
    assert "/runs/" in shipment.excludes  # a run directory inside the folder stays


def test_a_folder_over_the_limit_sends_the_module_alone(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shipping, "SHIP_LIMIT_BYTES", 10)
    (project / "big.bin").write_bytes(b"x" * 11)
    shipment = plan_shipment("ship_train:fit", None, None)
    assert shipment.working_dir is None
    assert shipment.py_modules == (str((project / "ship_train.py").resolve()),)
    assert shipment.why_module_only is not None and "more than" in shipment.why_module_only


def test_files_left_behind_do_not_count_towards_the_limit(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shipping, "SHIP_LIMIT_BYTES", 1000)
    (project / ".venv").mkdir()
    (project / ".venv" / "lib.so").write_bytes(b"x" * 5000)
    assert plan_shipment("ship_train:fit", None, None).working_dir == str(project.resolve())


def test_working_dir_naming_another_folder_keeps_the_module_alone(
    project: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    shipment = plan_shipment("ship_train:fit", str(data), None)
    assert shipment.working_dir == str(data)
    assert shipment.py_modules == (str((project / "ship_train.py").resolve()),)
    assert shipment.why_module_only == f"--working-dir {data} is another folder"
    same = plan_shipment("ship_train:fit", str(project), None)
    assert same.working_dir == str(project) and same.py_modules == ()


def test_builtins_and_installed_modules_ship_nothing() -> None:
    assert plan_shipment("lightgbm", None, None) == shipping.Shipment()
    assert plan_shipment("json:loads", None, None) == shipping.Shipment()


def test_the_version_message_names_both_and_the_install_line() -> None:
    text = mismatch_message(
        "10.0.0.5:6379", Versions("2.59.0", "3.11.7"), Versions("2.60.0", "3.11.7")
    )
    assert "runs Ray 2.59.0 on Python 3.11.7" in text
    assert "this driver runs Ray 2.60.0" in text
    assert "pip install 'raysweep[...]' 'ray[tune,default]==2.59.0'" in text
    other_python = mismatch_message(
        "auto", Versions("2.60.0", "3.10.4"), Versions("2.60.0", "3.11.7")
    )
    assert "pip install" not in other_python and "Python 3.10.4" in other_python
