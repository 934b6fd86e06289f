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


def test_a_section_states_its_ratios_in_one_line_and_its_targets_only_in_the_table() -> None:
    from benchmarks.harness.markdown import EN_DASH, render_section

    figures = {"fit_ratio": {"median": 2.0, "min": 1.5, "max": 2.5, "n": 3},
               "process_ratio": {"median": 1.2, "min": 1.1, "max": 1.3, "n": 3}}  # fmt: skip
    result = {**_result("Alpha", 2.0, "d1"), "command": "python -m benchmarks.alpha",
              "figures": figures}  # fmt: skip
    section = render_section(result).replace(EN_DASH, "-")
    assert "Ratios: fit ratio 2 (1.5-2.5); process ratio 1.2 (1.1-1.3)." in section
    assert "| target |" not in section and "speed" not in section  # in the Targets table
    assert "Reproduce: `python -m benchmarks.alpha`" in section


def test_targets_of_one_group_share_a_row_that_counts_the_misses() -> None:
    from benchmarks.harness.markdown import render_targets

    cells = [{"name": f"p at {p}%", "value": v, "op": "<=", "bound": 1.0, "unit": "",
              "met": v <= 1.0, "group": "p at 25% / 50% / 100%"}
             for p, v in ((25, 0.5), (50, 1.25), (100, 0.75))]  # fmt: skip
    alone = {"name": "q", "value": 2.0, "op": ">=", "bound": 2.0, "unit": "", "met": True}
    result = {"benchmark": "sq", "title": "SQ", "date": "d1", "targets": [*cells, alone]}
    rows = [line for line in render_targets([result]).splitlines() if line.startswith("| SQ")]
    assert rows == [
        "| SQ | p at 25% / 50% / 100% | 0.5 / 1.25 / 0.75 | <= 1 | **no** (1 of 3) | d1 |",
        "| SQ | q | 2 | >= 2 | yes | d1 |",
    ]
