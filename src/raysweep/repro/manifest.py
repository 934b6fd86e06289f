"""repro.json: everything that decides a run's result."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from raysweep.config.load import spec_hash
from raysweep.config.schema import SweepSpec
from raysweep.jsonio import write_json_atomic
from raysweep.repro.seeds import SEED_RULE

REPRO_FILE = "repro.json"


def write_manifest(run_dir: Path, spec: SweepSpec, gpu_plan: Any) -> dict[str, Any]:
    """Write repro.json for a run (minimal until the full manifest lands)."""
    manifest = {
        "master_seed": spec.seed,
        "seed_rule": SEED_RULE,
        "spec_sha256": spec_hash(spec),
    }
    write_json_atomic(run_dir / REPRO_FILE, manifest)
    return manifest
