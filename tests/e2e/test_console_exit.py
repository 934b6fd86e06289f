"""The console script ends promptly yet keeps exit handlers, output and the exit code."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import atexit, sys, threading, time
from raysweep.cli import console
atexit.register(lambda: print("exit handler ran", flush=False))
def late():
    time.sleep(1.0)
    print("non-daemon thread finished", flush=False)
threading.Thread(target=late).start()
sys.stdout.write("buffered line without newline")
console(sys.argv[1:])
print("never printed: console() does not return")
"""


def _console(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_exit_code_output_and_exit_handlers_survive_the_prompt_exit(tmp_path: Path) -> None:
    bad = tmp_path / "sweep.json"
    bad.write_text(json.dumps({"name": "x"}), encoding="utf-8")
    proc = _console("validate", "--config", str(bad))
    assert proc.returncode == 2, proc.stderr
    assert "buffered line without newline" in proc.stdout  # flushed before the exit
    assert "exit handler ran" in proc.stdout
    assert "non-daemon thread finished" in proc.stdout  # joined, as the interpreter does
    assert "never printed" not in proc.stdout
    assert "metric: Field required" in proc.stderr


def test_a_good_command_exits_zero(tmp_path: Path) -> None:
    proc = _console("validate", "--config", str(Path(__file__).parents[2] / "sweeps/demo.json"))
    assert proc.returncode == 0, proc.stderr
    assert "exit handler ran" in proc.stdout
