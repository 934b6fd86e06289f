"""The local executor's journal: one line a record, a torn last line skipped, never merged."""

from __future__ import annotations

from pathlib import Path

from raysweep.engines.local.journal import Journal
from raysweep.rundir import RunDir


def test_records_read_back_in_order(tmp_path: Path) -> None:
    run_dir = RunDir(tmp_path)
    with Journal(run_dir.journal_path) as journal:
        journal.suggested("a_00000", 0, {"x": 1.5, "__trial_index__": 0})
        journal.ended({"id": "a_00000", "index": 0, "status": "completed", "rows": [{"v": 1}]})
    records = run_dir.read_journal()
    assert [r["e"] for r in records] == ["suggest", "end"]
    assert records[0]["config"] == {"x": 1.5, "__trial_index__": 0}
    assert records[1]["rows"] == [{"v": 1}]


def test_a_torn_last_line_is_skipped_and_the_next_record_starts_a_new_line(
    tmp_path: Path,
) -> None:
    run_dir = RunDir(tmp_path)
    with Journal(run_dir.journal_path) as journal:
        journal.suggested("a_00000", 0, {"__trial_index__": 0})
    with run_dir.journal_path.open("a") as file:
        file.write('{"e": "end", "id": "a_00000", "rows": [{"v"')  # a kill mid-write
    assert [r["e"] for r in run_dir.read_journal()] == ["suggest"]
    with Journal(run_dir.journal_path) as journal:
        journal.suggested("a_00001", 1, {"__trial_index__": 1})
    assert [r.get("id") for r in run_dir.read_journal()] == ["a_00000", "a_00001"]


def test_numpy_numbers_are_written_as_plain_numbers(tmp_path: Path) -> None:
    import numpy as np

    run_dir = RunDir(tmp_path)
    with Journal(run_dir.journal_path) as journal:
        journal.suggested("a_00000", 0, {"n": np.int64(3), "f": np.float32(0.5)})
    assert run_dir.read_journal()[0]["config"] == {"n": 3, "f": 0.5}
