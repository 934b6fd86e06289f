"""trainables/wrapper.py: what the trainable raysweep hands Ray does at every trial start,
called in this process (a CPU trial needs no Ray): seed by index, context, paths, name."""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from raysweep.repro.seeds import trial_seed_for
from raysweep.search.indexed import INDEX_KEY
from raysweep.trainables.context import TrialContext
from raysweep.trainables.wrapper import TrialPlan, make_trainable, shipped_paths

MODULE = "wrapper_probe_mod"
PROBE = """
import random

from raysweep.trainables.context import trial_context

SEEN = []


def fit(config):
    SEEN.append((dict(config), trial_context(), random.random()))
    return "done"
"""


@pytest.fixture
def probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A user trainable that records its config, its trial context and a first draw."""
    (tmp_path / f"{MODULE}.py").write_text(PROBE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    yield importlib.import_module(MODULE)
    sys.modules.pop(MODULE, None)


def test_each_trial_is_seeded_from_its_index_not_its_order(probe: Any) -> None:
    plan = TrialPlan(f"{MODULE}:fit", master_seed=42, metric="loss", mode="min", cpus=2)
    trial = make_trainable(plan)
    assert trial.__name__ == "fit"
    assert trial({"x": 1.5, INDEX_KEY: 3}) == "done"
    assert trial({"x": 2.5, INDEX_KEY: 0}) == "done"
    random.seed(0)  # what a trial runs after never changes what the next one draws
    assert trial({"x": 1.5, INDEX_KEY: 3}) == "done"
    (config, ctx, draw), (_, first, _), (_, _, again) = probe.SEEN
    assert config == {"x": 1.5}  # the index is raysweep's, never the user's
    assert isinstance(ctx, TrialContext)
    assert (ctx.index, ctx.seed, ctx.master_seed, ctx.cpus) == (3, trial_seed_for(42, 3), 42, 2)
    assert (first.index, first.seed) == (0, trial_seed_for(42, 0))
    assert ctx.gpu_ids == () and ctx.gpu_fraction == 0.0  # a CPU trial
    assert draw == again


def test_the_context_is_cleared_after_the_trial(probe: Any) -> None:
    from raysweep.trainables.context import trial_context

    make_trainable(TrialPlan(f"{MODULE}:fit", 1, "loss", "min"))({"x": 0.0})
    with pytest.raises(RuntimeError, match="only available inside a raysweep trial"):
        trial_context()


def test_paths_inside_the_working_dir_point_at_this_nodes_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    driver, node = tmp_path / "driver", tmp_path / "node"
    (node / "data").mkdir(parents=True)
    (node / "data" / "train.csv").write_text("a\n")
    args = {"path": f"{driver}/data/train.csv", "other": "/elsewhere/x.csv", "n": 3}
    assert shipped_paths(args, str(driver)) == args  # no unpacked copy: unchanged
    monkeypatch.setenv("TUNE_ORIG_WORKING_DIR", str(node))
    moved = shipped_paths(args, str(driver))
    assert moved == {**args, "path": str(node / "data" / "train.csv")}
    assert shipped_paths(args, None) == args
