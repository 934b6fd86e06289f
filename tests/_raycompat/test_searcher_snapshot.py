"""A restore pairs the trials with the searcher saved in the same snapshot, not Ray's files.

Real Optuna behind the chain Ray sees (``build_search_alg``, strict window), no
Ray cluster: a ``kill -9`` between Ray's writes is played by putting an older
searcher's files back beside a newer snapshot.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from raysweep._raycompat.searcher_snapshot import KEY, save_searcher
from raysweep.search.build import SweepSearch, build_search_alg
from strict_searchers import objective, spec_for

SESSION = "2026-11-27_07-00-00"


def sweep() -> SweepSearch:
    """Two trials at a time (no Ray here to count slots), a window of two."""
    spec = spec_for("optuna", batch_size=2, schedule="window", num_samples=8)
    search = spec.search.model_copy(update={"max_concurrent": 2})
    return build_search_alg(spec.model_copy(update={"search": search}))


def finish(alg: SweepSearch, trial_id: str, config: dict[str, Any]) -> None:
    alg.searcher.on_trial_complete(trial_id, {"loss": objective(config)})


def snapshot(staging: Path, searcher: dict[str, str] | None) -> None:
    """An experiment snapshot in ``staging``, holding ``searcher`` (None: written before it)."""
    data: dict[str, Any] = {"trial_data": [], "runner_data": {}, "stats": {}}
    if searcher is not None:
        data[KEY] = searcher
    (staging / f"experiment_state-{SESSION}.json").write_text(json.dumps(data))


def run_until_second_save(tmp_path: Path) -> tuple[SweepSearch, dict[str, Any], Path, Path]:
    """Four trials suggested, two finished; Ray's files saved after the first finished."""
    alg, configs = sweep(), {}
    early, staging = tmp_path / "early", tmp_path / "staging"
    early.mkdir()
    staging.mkdir()
    for trial_id in ("t0", "t1"):
        configs[trial_id] = alg.searcher.suggest(trial_id)
    finish(alg, "t0", configs["t0"])
    save_searcher(alg, str(early), SESSION)
    configs["t2"] = alg.searcher.suggest("t2")
    finish(alg, "t1", configs["t1"])
    configs["t3"] = alg.searcher.suggest("t3")
    return alg, configs, early, staging


def test_the_searcher_saved_with_the_snapshot_wins_over_older_files_beside_it(
    tmp_path: Path,
) -> None:
    alg, configs, early, staging = run_until_second_save(tmp_path)
    snapshot(staging, save_searcher(alg, str(staging), SESSION))
    for path in early.iterdir():  # killed after the snapshot, before Ray's own files landed
        shutil.copy(path, staging / path.name)

    restored = sweep()
    restored.restore_from_dir(str(staging))
    for chain in (alg, restored):  # both go on the same way: the restored one is not stuck
        finish(chain, "t2", configs["t2"])
        finish(chain, "t3", configs["t3"])
    following = [alg.searcher.suggest(t) for t in ("t4", "t5")]
    assert following == [restored.searcher.suggest(t) for t in ("t4", "t5")]
    assert [c["__trial_index__"] for c in following] == [4, 5]


def test_a_snapshot_written_before_the_searcher_was_kept_in_it_restores_from_rays_files(
    tmp_path: Path,
) -> None:
    _, configs, early, staging = run_until_second_save(tmp_path)
    snapshot(staging, None)
    for path in early.iterdir():
        shutil.copy(path, staging / path.name)

    restored = sweep()
    restored.restore_from_dir(str(staging))
    assert restored.searcher.suggest("t2") == configs["t2"]  # the chain as Ray's files left it
