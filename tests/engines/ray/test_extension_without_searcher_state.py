"""An extension (``sweep resume --num-samples``) whose earlier experiment lost its saved
searcher state, with a searcher that cannot be told earlier trials (HyperOpt; Optuna over
a conditional, define-by-run space): it runs, and says its searcher started afresh."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from raysweep import api
from raysweep._raycompat.searcher_snapshot import KEY
from raysweep.rundir import RunDir


@pytest.mark.parametrize("algorithm", ["optuna", "hyperopt"])
def test_an_extension_without_searcher_state_starts_its_searcher_afresh(
    algorithm: str, ray_session: None, tmp_path: Path, caplog: pytest.LogCaptureFixture,
    run_in_process: Callable[[Path, dict[str, Any]], Path],
    small_sweep: Callable[..., dict[str, Any]],
) -> None:  # fmt: skip
    data = small_sweep(name=f"ext-{algorithm}")
    data["search"]["algorithm"] = algorithm
    data["space"] |= {
        "model": {"type": "choice", "values": ["a", "b"]},
        "a.depth": {"type": "int", "low": 1, "high": 4, "when": {"model": "a"}},
        "steps": 2,
    }
    run_dir = RunDir(run_in_process(tmp_path, data))
    states = list((run_dir.path / "tune").glob("searcher-state-*.pkl"))
    assert states  # Ray saves it with every snapshot; a lost or foreign copy lacks it
    for state in states:
        state.unlink()
    for snapshot in (run_dir.path / "tune").glob("experiment_state-*.json"):  # and its copy there
        data = json.loads(snapshot.read_text())
        assert data.pop(KEY)
        snapshot.write_text(json.dumps(data))
    out = io.StringIO()
    with caplog.at_level(logging.WARNING, logger="raysweep.search.continued"):
        code = api.resume_sweep(str(run_dir.path), api.RunOptions(num_samples=3), out)
    assert code == 0, out.getvalue()
    assert sorted(t.index for t in run_dir.read_results().trials) == [0, 1, 2]
    assert "tune/ holds no saved searcher state" in caplog.text
    assert "cannot be told the 2 earlier trials" in caplog.text
