"""``scheduler.rung_rule``: new ASHA sweeps record ``rank``; older spec.json files keep
Ray Tune's ``percentile`` rule and their hash, and resume with their original config."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from factories import quadratic_sweep
from raysweep._raycompat.asha_rungs import RuleBracket
from raysweep.config.load import parse_spec, spec_hash, spec_to_json
from raysweep.errors import ConfigError, ResumeError
from raysweep.run.resume_spec import resumed_spec
from raysweep.rundir import RunDir
from raysweep.schedulers.build import build_scheduler


def asha_data(**scheduler: object) -> dict[str, Any]:
    return quadratic_sweep(scheduler={"type": "asha", "max_t": 9, **scheduler})


def rank_brackets(spec: Any, rule: str = "rank") -> bool:
    brackets = build_scheduler(spec)._brackets  # type: ignore[attr-defined]
    return all(isinstance(b, RuleBracket) and b.rule == rule for b in brackets)


def test_a_new_asha_sweep_records_the_rank_rule() -> None:
    spec = parse_spec(asha_data())
    assert spec_to_json(spec)["scheduler"]["rung_rule"] == "rank"
    assert rank_brackets(spec)


def test_the_quorum_rule_is_recorded_and_built() -> None:
    spec = parse_spec(asha_data(rung_rule="quorum"))
    assert spec_to_json(spec)["scheduler"]["rung_rule"] == "quorum"
    assert rank_brackets(spec, "quorum")


def test_rays_rule_stays_available_and_is_recorded() -> None:
    spec = parse_spec(asha_data(rung_rule="percentile"))
    assert spec_to_json(spec)["scheduler"]["rung_rule"] == "percentile"
    assert not rank_brackets(spec)


def old_spec_json(tmp_path: Path) -> tuple[RunDir, str]:
    """A run directory whose spec.json was written before the field existed."""
    old = spec_to_json(parse_spec(asha_data(), new_defaults=False))
    assert "rung_rule" not in old["scheduler"]
    canonical = json.dumps(old, sort_keys=True, separators=(",", ":"))
    recorded = hashlib.sha256(canonical.encode()).hexdigest()
    (tmp_path / "spec.json").write_text(json.dumps({"sha256": recorded, "spec": old}))
    return RunDir(tmp_path), recorded


def test_an_old_spec_json_keeps_rays_rule_and_its_hash(tmp_path: Path) -> None:
    run_dir, recorded = old_spec_json(tmp_path)
    spec = run_dir.read_spec()
    assert spec.scheduler.rung_rule is None  # type: ignore[union-attr]
    assert spec_hash(spec) == recorded
    assert not rank_brackets(spec)


@pytest.mark.parametrize(
    "given", [{}, {"rung_rule": "percentile"}, {"rung_rule": "rank"}, {"rung_rule": "quorum"}]
)
def test_a_run_resumes_with_the_config_it_was_started_with(
    tmp_path: Path, given: dict[str, str]
) -> None:
    started = parse_spec(asha_data(**given))
    resumed = resumed_spec(RunDir(tmp_path), started, parse_spec(asha_data(**given)))
    assert spec_to_json(resumed) == spec_to_json(started)


def test_an_old_run_resumes_with_its_original_config_and_keeps_rays_rule(
    tmp_path: Path,
) -> None:
    run_dir, _ = old_spec_json(tmp_path)
    resumed = resumed_spec(run_dir, run_dir.read_spec(), parse_spec(asha_data()))
    assert not rank_brackets(resumed)


def test_a_changed_rule_is_refused_on_resume(tmp_path: Path) -> None:
    started = parse_spec(asha_data())
    with pytest.raises(ResumeError, match=r'scheduler\.rung_rule: "rank" → "percentile"'):
        resumed_spec(RunDir(tmp_path), started, parse_spec(asha_data(rung_rule="percentile")))


def test_an_unknown_rule_is_refused_by_name() -> None:
    with pytest.raises(
        ConfigError, match=r"scheduler\.rung_rule: .*'rank', 'quorum' or 'percentile'"
    ):
        parse_spec(asha_data(rung_rule="top"))
