"""Smoke test of the benchmark harness: one tiny benchmark end to end, no timing asserts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
SUMMARY_KEYS = {"median", "min", "max", "n", "values"}


def _run_scale(results: Path, markdown: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("RAYSWEEP_BENCH_PYTHONPATH", None)
    cmd = [sys.executable, "-m", "benchmarks.run", "scale", "--trials", "20"]
    cmd += ["--results-dir", str(results), "--markdown", str(markdown)]
    proc = subprocess.run(
        cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=240, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data: dict[str, Any] = json.loads((results / "scale.json").read_text(encoding="utf-8"))
    return data


@pytest.mark.slow
def test_scale_benchmark_writes_result_json_and_markdown(tmp_path: Path) -> None:
    markdown = tmp_path / "BENCHMARKS.md"
    markdown.write_text("# bench\n\n## Resume\n\nsomeone else's text\n", encoding="utf-8")
    data = _run_scale(tmp_path / "results", markdown)

    assert data["benchmark"] == "scale"
    assert data["quick"] is False
    for key in ("date", "machine", "versions", "command", "params", "variants", "targets"):
        assert key in data, key
    assert data["versions"]["ray"] and data["versions"]["raysweep"]
    assert data["machine"]["logical_cpus"] >= 1
    assert data["command"].startswith("python -m benchmarks.run scale")
    assert data["params"]["trials"] == 20

    metrics = data["variants"]["raysweep"]
    assert metrics["failed_runs"] == 0
    for key in ("fit_s", "process_s", "throughput_ratio", "driver_peak_rss_mb"):
        assert set(metrics[key]) >= SUMMARY_KEYS, key
        assert metrics[key]["n"] == 1, key
        assert metrics[key]["min"] <= metrics[key]["median"] <= metrics[key]["max"]
    assert data["per_run"][0]["finished"] == 20

    names = [t["name"] for t in data["targets"]]
    assert any("throughput" in n for n in names) and any("memory" in n for n in names)
    for t in data["targets"]:
        assert {"value", "op", "bound", "met"} <= set(t)

    run = data["runs"]["raysweep"][0]
    assert run["returncode"] == 0
    assert run["fit_s"] is not None and run["first_trial_s"] is not None

    text = markdown.read_text(encoding="utf-8")
    assert "<!-- bench:scale:start -->" in text and "<!-- bench:scale:end -->" in text
    assert "someone else's text" in text  # other sections are kept
    assert "Reproduce: `python -m benchmarks.run scale --trials 20`" in text
