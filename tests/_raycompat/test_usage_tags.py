"""tune.run's callback usage tag is skipped while usage stats are off: no MLflow import.

Each case runs in a fresh interpreter, so that no earlier test has imported MLflow.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("mlflow", reason="the tag imports MLflow only where it is installed")

TAG = """
import sys
from ray.tune import Callback
import ray.air._internal.usage as usage
from raysweep._raycompat.usage_tags import untagged_callbacks
with untagged_callbacks():
    usage.tag_callbacks([Callback()])
print("mlflow" in sys.modules)
"""


def imports_mlflow(**env: str) -> bool:
    """Whether tagging one callback inside the block imported MLflow, under ``env``."""
    run_env = {k: v for k, v in os.environ.items() if k != "RAYSWEEP_RAY_PATCHES"} | env
    out = subprocess.run(
        [sys.executable, "-c", TAG], env=run_env, capture_output=True, text=True, check=True
    )
    return out.stdout.strip() == "True"


def test_with_usage_stats_off_the_tag_is_skipped_and_mlflow_not_imported() -> None:
    assert not imports_mlflow(RAY_USAGE_STATS_ENABLED="0")


def test_with_usage_stats_on_or_the_patches_off_ray_tags_as_it_does() -> None:
    assert imports_mlflow(RAY_USAGE_STATS_ENABLED="1")
    assert imports_mlflow(RAY_USAGE_STATS_ENABLED="0", RAYSWEEP_RAY_PATCHES="off")
