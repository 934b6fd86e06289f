"""``reproducibility.strict_schedule``: new strict sweeps record the window, old specs batches."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from factories import quadratic_sweep
from raysweep.config.load import parse_spec, spec_hash, spec_to_json
from raysweep.errors import ConfigError
from raysweep.run.resume_spec import resumed_spec
from raysweep.rundir import RunDir
from raysweep.search.build import build_searcher
from raysweep.search.strict import BatchedSearcher
from raysweep.search.window import WindowSearcher


def strict_data(**repro: object) -> dict[str, object]:
    return quadratic_sweep(reproducibility={"strict": True, "batch_size": 3, **repro})


def test_a_new_strict_sweep_records_the_window() -> None:
    spec = parse_spec(strict_data())
    assert spec.reproducibility.strict_schedule == "window"
    assert spec_to_json(spec)["reproducibility"]["strict_schedule"] == "window"
    assert isinstance(build_searcher(spec).searcher, WindowSearcher)


def test_batches_stay_available_and_are_recorded() -> None:
    explicit = parse_spec(strict_data(strict_schedule="batch"))
    assert explicit.reproducibility.schedule == "batch"
    assert spec_to_json(explicit)["reproducibility"]["strict_schedule"] == "batch"
    assert isinstance(build_searcher(explicit).searcher, BatchedSearcher)


@pytest.mark.parametrize("given", [{}, {"strict_schedule": "batch"}, {"strict_schedule": "window"}])
def test_a_run_resumes_with_the_config_it_was_started_with(
    tmp_path: Path, given: dict[str, str]
) -> None:
    """``sweep run --config F --resume``, a nightly job's command: explicit batches were
    once left out of spec.json, and the config then differed from it (refused)."""
    started = parse_spec(strict_data(**given))
    resumed = resumed_spec(RunDir(tmp_path), started, parse_spec(strict_data(**given)))
    assert spec_to_json(resumed) == spec_to_json(started)


def test_an_old_strict_spec_json_resumes_with_batches_and_the_same_hash(tmp_path: Path) -> None:
    old = spec_to_json(parse_spec(strict_data(), new_defaults=False))
    assert "strict_schedule" not in old["reproducibility"]
    canonical = json.dumps(old, sort_keys=True, separators=(",", ":"))
    recorded = hashlib.sha256(canonical.encode()).hexdigest()
    (tmp_path / "spec.json").write_text(json.dumps({"sha256": recorded, "spec": old}))
    spec = RunDir(tmp_path).read_spec()
    assert spec.reproducibility.strict_schedule is None
    assert spec.reproducibility.schedule == "batch"
    assert spec_hash(spec) == recorded
    assert isinstance(build_searcher(spec).searcher, BatchedSearcher)


def test_a_sweep_without_strict_mode_records_nothing() -> None:
    spec = parse_spec(quadratic_sweep())
    assert "strict_schedule" not in spec_to_json(spec)["reproducibility"]


def test_an_unknown_schedule_is_refused_by_name() -> None:
    with pytest.raises(
        ConfigError, match=r"reproducibility\.strict_schedule: .*'batch' or 'window'"
    ):
        parse_spec(strict_data(strict_schedule="sliding"))
