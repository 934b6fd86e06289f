"""Bad input never crashes a sweep and never passes silently (issue 21), as ``sweep`` runs it.

Every parameter case exits 2 from both ``sweep validate`` and ``sweep run``,
names the key (and the nearest valid name when one is close), writes nothing
and starts no Ray (Ray's temp directory, RAY_TMPDIR, is never created). A
trial's own failure is recorded whole while the other trials finish.
"""

from __future__ import annotations

import contextlib
import functools
import json
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import Outcome, settle, together

from factories import csv_with_missing_values, make_sweep, run_sweep_cli

REPO = Path(__file__).resolve().parents[2]
INT = {"type": "int", "low": 2, "high": 6}


@contextlib.contextmanager
def new_ray_tmp() -> Iterator[Path]:
    """A short RAY_TMPDIR that does not exist yet (Ray creates it when it starts)."""
    parent = Path(tempfile.mkdtemp(prefix="rsw", dir="/tmp"))
    try:
        yield parent / "ray"
    finally:
        shutil.rmtree(parent, ignore_errors=True)


@pytest.fixture
def ray_tmp() -> Iterator[Path]:
    with new_ray_tmp() as path:
        yield path


def config(
    trainable: str, space: dict[str, Any], args: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A small sweep of ``trainable`` over ``space``; ``args``: its trainable_args, if not
    make_sweep's."""
    data = make_sweep(trainable, name="bad", space=space)
    if args:
        data["trainable_args"] = args
    return data


# (trainable, space, trainable_args or None, what stderr must say)
ROWS: dict[str, tuple[str, dict[str, Any], dict[str, Any] | None, list[str]]] = {
    # the table
    "lightgbm-num_leafs": ("lightgbm", {"num_leafs": 7}, None,
                           ["space.num_leafs: unknown LightGBM parameter",
                            "did you mean num_leaves?"]),
    "xgboost-max_dept": ("xgboost", {"max_dept": 3}, None,
                         ["space.max_dept: unknown XGBoost parameter",
                          "did you mean max_depth?"]),
    "catboost-depht": ("catboost", {"depht": 3}, None,
                       ["space.depht: unknown CatBoost parameter", "did you mean depth?"]),
    "torch_mlp-hiden_size": ("torch_mlp", {"hiden_size": 32}, None,
                             ["space.hiden_size: unknown torch_mlp parameter",
                              "did you mean hidden_size?"]),
    "lightgbm-seed": ("lightgbm", {"seed": 7}, None,
                      ["space.seed: not a parameter to set here", 'top-level "seed"']),
    "lightgbm-num_threads": ("lightgbm", {"num_threads": 4}, None,
                             ["space.num_threads: not a parameter to set here",
                              "resources.cpus_per_trial"]),
    "lightgbm-num_leaves-range": ("lightgbm", {"num_leaves": {"type": "int", "low": -5, "high": 1}},
                                  None, ["space.num_leaves: LightGBM refuses num_leaves=-5",
                                         "Check failed: (num_leaves) > (1)"]),
    # their kin
    "lightgbm-typo-sampled": ("lightgbm", {"learning_rat": {"type": "loguniform", "low": 0.01,
                                                           "high": 0.3}}, None,
                              ["space.learning_rat", "did you mean learning_rate?"]),
    "lightgbm-metric": ("lightgbm", {"metric": "auc"}, None,
                        ["space.metric: not a parameter to set here", 'top-level "metric"']),
    "lightgbm-rounds": ("lightgbm", {"num_iterations": INT}, None,
                        ["space.num_iterations", "trainable_args.num_boost_round sets"]),
    "lightgbm-boosting-choice": ("lightgbm", {"boosting": {"type": "choice",
                                                          "values": ["gbdt", "gdbt"]}}, None,
                                 ['space.boosting: LightGBM refuses boosting="gdbt"',
                                  "Unknown boosting type gdbt"]),
    "xgboost-random_state": ("xgboost", {"random_state": 1}, None,
                             ["space.random_state", 'top-level "seed"']),
    "xgboost-n_jobs": ("xgboost", {"n_jobs": 2}, None,
                       ["space.n_jobs", "resources.cpus_per_trial"]),
    "xgboost-max_depth-range": ("xgboost", {"max_depth": {"type": "int", "low": -1, "high": 4}},
                                None, ["space.max_depth: XGBoost refuses max_depth=-1",
                                       "should be greater equal to 0"]),
    "xgboost-ignored": ("xgboost", {"booster": "gblinear", "max_depth": INT}, None,
                        ["space.max_depth: XGBoost does not use this parameter"]),
    "catboost-thread_count": ("catboost", {"thread_count": 2}, None,
                              ["space.thread_count", "resources.cpus_per_trial"]),
    "catboost-random_seed": ("catboost", {"random_seed": 2}, None,
                             ["space.random_seed", 'top-level "seed"']),
    "catboost-depth-range": ("catboost", {"depth": {"type": "int", "low": 4, "high": 20}}, None,
                             ["space.depth: CatBoost refuses depth=20",
                              "Maximum tree depth is 16"]),
    "catboost-task_type": ("catboost", {"task_type": "GPU"}, None,
                           ["space.task_type", "resources.gpus_per_trial"]),
    "torch_mlp-dropout-range": ("torch_mlp", {"dropout": {"type": "uniform", "low": 0.0,
                                                          "high": 1.5}}, None,
                                ["space.dropout: torch_mlp refuses dropout=1.5",
                                 "invalid dropout"]),
    "torch_mlp-epochs": ("torch_mlp", {"epochs": 5}, None,
                         ["space.epochs", "trainable_args.epochs sets"]),
}  # fmt: skip


@pytest.fixture(scope="module")
def bad_rows(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[Any, Outcome[None]]]:
    """Every row checked, two rows at a time (each is two short CPU-bound processes)."""
    outcomes = together(
        {
            row: functools.partial(check_bad_row, row, tmp_path_factory.mktemp("row"))
            for row in sorted(ROWS)
        },
        at_once=2,
    )
    yield outcomes
    settle(outcomes)


@pytest.mark.parametrize("row", sorted(ROWS))
def test_bad_parameter_exits_2_writes_nothing_starts_no_ray(
    bad_rows: dict[Any, Outcome[None]], row: str
) -> None:
    bad_rows[row].result()


def check_bad_row(row: str, tmp_path: Path) -> None:
    with new_ray_tmp() as ray_tmp:
        check_bad_row_with(row, tmp_path, ray_tmp)


def check_bad_row_with(row: str, tmp_path: Path, ray_tmp: Path) -> None:
    trainable, space, args, expected = ROWS[row]
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(config(trainable, space, args)))
    run = ["run", "--config", str(path), "--storage", str(tmp_path / "runs")]
    for command in (["validate", "--config", str(path)], run):
        proc = run_sweep_cli(*command, cwd=tmp_path, env={"RAY_TMPDIR": str(ray_tmp)})
        assert proc.returncode == 2, (command[0], proc.stdout, proc.stderr)
        for fragment in expected:
            assert fragment in proc.stderr, (command[0], fragment, proc.stderr)
        assert proc.stdout == "", (command[0], proc.stdout)
        assert "Traceback" not in proc.stderr
        assert sorted(p.name for p in tmp_path.iterdir()) == ["sweep.json"]  # wrote nothing
        assert not ray_tmp.exists(), "Ray was started"


def test_validate_shows_aliases_resolved(tmp_path: Path, ray_tmp: Path) -> None:
    path = tmp_path / "sweep.json"
    space = {"num_leaf": INT, "min_child_samples": 5, "eta": 0.1, "objective": "binary"}
    path.write_text(json.dumps(config("lightgbm", space)))
    proc = run_sweep_cli(
        "validate", "--config", str(path), cwd=tmp_path, env={"RAY_TMPDIR": str(ray_tmp)}
    )
    assert proc.returncode == 0, proc.stderr
    shown = json.loads(proc.stdout)["space"]
    assert list(shown) == ["num_leaves", "min_data_in_leaf", "learning_rate", "objective"]


def run_to_end(
    tmp_path: Path, ray_tmp: Path, data: dict[str, Any], pythonpath: tuple[Path, ...] = ()
) -> Path:
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(data))
    runs = tmp_path / "runs"
    proc = run_sweep_cli("run", "--config", str(path), "--storage", str(runs), cwd=tmp_path,
                         env={"RAY_TMPDIR": str(ray_tmp)}, pythonpath=pythonpath)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert ray_tmp.exists()  # the other tests' check for "no Ray" means something
    return runs / data["name"]


def trials(run_dir: Path) -> list[dict[str, Any]]:
    return list(json.loads((run_dir / "results.json").read_text())["trials"])


@pytest.fixture(scope="module")
def runs_to_end(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[Any, Outcome[None]]]:
    """The two runs with a failing trial, at once: nothing they check is timed."""

    def scenario(check: Callable[[Path, Path], None]) -> Callable[[], None]:
        def run() -> None:
            with new_ray_tmp() as ray_tmp:
                check(tmp_path_factory.mktemp("run"), ray_tmp)

        return run

    outcomes = together(
        {
            "catboost": scenario(catboost_runtime_error_is_recorded),
            "two arguments": scenario(two_argument_exception_is_recorded),
        }
    )
    yield outcomes
    settle(outcomes)


def test_catboost_runtime_error_is_recorded_and_others_finish(
    runs_to_end: dict[Any, Outcome[None]],
) -> None:
    """nan_mode Forbidden passes the check (the tiny data has no NaN) and fails on the real data."""
    runs_to_end["catboost"].result()


def test_two_argument_exception_is_recorded_with_its_message(
    runs_to_end: dict[Any, Outcome[None]],
) -> None:
    runs_to_end["two arguments"].result()


def catboost_runtime_error_is_recorded(tmp_path: Path, ray_tmp: Path) -> None:
    data_file = csv_with_missing_values(tmp_path / "with_nan.csv")
    data = {
        **config("catboost", {"nan_mode": {"type": "grid", "values": ["Min", "Forbidden", "Max"]},
                              "depth": 3},
                 {"dataset": str(data_file), "target": "target", "num_boost_round": 4}),
        "search": {"algorithm": "grid", "num_samples": 1, "max_concurrent": 1},
    }  # fmt: skip
    run_dir = run_to_end(tmp_path, ray_tmp, data)
    by_mode = {t["config"]["nan_mode"]: t for t in trials(run_dir)}
    assert by_mode["Min"]["status"] == by_mode["Max"]["status"] == "completed"
    failed = by_mode["Forbidden"]
    assert failed["status"] == "errored"
    last = failed["error"].strip().splitlines()[-1]
    assert last.startswith("_catboost.CatBoostError: ") and "nan_mode != Forbidden" in last
    assert "Traceback" in failed["error"] or 'File "' in failed["error"]
    report = (run_dir / "report.txt").read_text()
    assert "CatBoostError: " in report and "nan_mode != Forbidden" in report
    status = run_sweep_cli("status", str(run_dir))
    assert status.returncode == 0 and "1 errored" in status.stdout, status.stderr


BAD_MODULE = """
from ray import tune


class BadError(Exception):
    def __init__(self, a, b):
        super().__init__(f"bad {a} {b}")


def fit(config):
    if config["x"] > 0.5:
        raise BadError(1, 2)
    tune.report({"loss": config["x"]})
"""


def two_argument_exception_is_recorded(tmp_path: Path, ray_tmp: Path) -> None:
    code = tmp_path / "code"
    code.mkdir()
    (code / "badmod.py").write_text(BAD_MODULE)
    data = make_sweep(
        "badmod:fit",
        name="user",
        space={"x": {"type": "grid", "values": [0.1, 0.9]}},
        search={"algorithm": "grid", "num_samples": 1, "max_concurrent": 1},
    )
    run_dir = run_to_end(tmp_path, ray_tmp, data, pythonpath=(code,))
    records = {t["config"]["x"]: t for t in trials(run_dir)}
    assert records[0.1]["status"] == "completed" and records[0.1]["error"] is None
    failed = records[0.9]
    assert failed["status"] == "errored"
    assert failed["error"].strip().splitlines()[-1] == "badmod.BadError: bad 1 2"
    assert "TrialError: BadError: bad 1 2" in failed["error"]
    assert "raise BadError(1, 2)" in failed["error"]  # the original traceback
    assert "missing 1 required positional argument" not in failed["error"]
    assert "badmod.BadError: bad 1 2" in (run_dir / "report.txt").read_text()
