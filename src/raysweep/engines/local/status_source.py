"""What ``sweep status`` reads of an unfinished local run: its journal (what a resume finds)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from raysweep.engines.local.journal import END, SUGGEST
from raysweep.rundir import RunDir


class JournalSource:
    """Trials by how ``local/journal.jsonl`` left them: ended (by outcome) or unfinished."""

    label = "journal"

    def holds(self, run_dir: RunDir) -> bool:
        return run_dir.has_journal()

    def counts(self, run_dir: RunDir, state: dict[str, Any]) -> dict[str, int]:
        suggested: set[str] = set()
        counts: dict[str, int] = {}
        for record in run_dir.read_journal():
            if record.get("e") == SUGGEST:
                suggested.add(str(record.get("id")))
            elif record.get("e") == END and str(record.get("id")) in suggested:
                suggested.discard(str(record.get("id")))
                kind = str(record.get("status"))
                counts[kind] = counts.get(kind, 0) + 1
        if suggested:
            counts["unfinished"] = len(suggested)
        return counts


if TYPE_CHECKING:  # the class implements the seam (checked by mypy)
    from raysweep.engines.base import TrialSource

    _IMPLEMENTS: type[TrialSource] = JournalSource
