"""Which trials returned by themselves (not stopped by their scheduler), as trial_info.jsonl
grows: what the progress lines need to say ``completed`` or ``stopped`` as results.json will."""

from __future__ import annotations

import json
from pathlib import Path


class ReturnedTrials:
    """The trials whose function returned by itself, read from trial_info.jsonl as it grows
    (only the lines added since the last look: O(1) per trial)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._offset = 0
        self._seen: set[str] = set()
        self._returned: set[str] = set()

    def returned(self, trial_id: str) -> bool:
        """Whether ``trial_id`` returned; True when nothing was recorded of it (as results.json
        reads a trial without trial_info lines)."""
        self._read_more()
        return trial_id in self._returned or trial_id not in self._seen

    def _read_more(self) -> None:
        if self.path is None:
            return
        try:
            with self.path.open("rb") as fh:
                fh.seek(self._offset)
                chunk = fh.read()
        except OSError:
            return
        complete = chunk[: chunk.rfind(b"\n") + 1]  # a line being written is read next time
        self._offset += len(complete)
        for line in complete.splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            self._seen.add(str(record.get("trial_id")))
            if record.get("event") == "returned":
                self._returned.add(str(record.get("trial_id")))
