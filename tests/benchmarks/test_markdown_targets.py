"""The targets table keeps the rows of benchmarks that were not re-run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.harness.markdown import update_targets


def _result(title: str, value: float, date: str) -> dict[str, Any]:
    target = {"name": "speed", "value": value, "op": ">=", "bound": 1.0, "unit": "x", "met": True}
    return {"benchmark": title.lower(), "title": title, "date": date, "targets": [target]}


def test_rows_of_other_benchmarks_stay_and_a_rerun_replaces_its_rows_in_place(
    tmp_path: Path,
) -> None:
    path = tmp_path / "BENCHMARKS.md"
    path.write_text("# bench\n\ntext\n", encoding="utf-8")
    update_targets(path, [_result("Alpha", 2.0, "d1"), _result("Beta", 3.0, "d1")])
    update_targets(path, [_result("Gamma", 4.0, "d2")])  # only Gamma re-ran
    update_targets(path, [_result("Alpha", 5.0, "d3")])  # Alpha again
    text = path.read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| ") and "x |" in line]
    assert [row.split("|")[1].strip() for row in rows] == ["Alpha", "Beta", "Gamma"]
    assert "| 5x |" in rows[0] and "d3" in rows[0]  # replaced where it was
    assert "| 3x |" in rows[1] and "| 4x |" in rows[2]
    assert text.count("<!-- bench:targets:start -->") == 1 and "text" in text
