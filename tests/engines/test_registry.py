"""Engines are chosen by name from one table; choosing one, or a trial source, imports no Ray."""

from __future__ import annotations

import subprocess
import sys

import pytest

from raysweep.engines.registry import ENGINES, engine_named
from raysweep.errors import ConfigError


def test_an_unknown_engine_name_lists_the_registered_ones() -> None:
    with pytest.raises(ConfigError, match=r"unknown execution 'spark'; valid: local, ray"):
        engine_named("spark")


def test_each_registered_engine_answers_to_its_name() -> None:
    assert sorted(ENGINES) == ["local", "ray"]
    for name in ENGINES:
        assert engine_named(name).name == name


def test_choosing_an_engine_and_reading_trial_sources_import_no_ray() -> None:
    """sweep validate, --dry-run and sweep status pick engines and sources; Ray stays out."""
    code = (
        "import sys\n"
        "from raysweep.engines.registry import ENGINES, engine_named, trial_sources\n"
        "trial_sources()\n"
        "[engine_named(n).plan_lines for n in ENGINES]\n"
        "print(sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, env={"PYTHONPATH": ":".join(sys.path)})  # fmt: skip
    assert done.stdout.strip() == "[]"
