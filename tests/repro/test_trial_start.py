"""A trial's start seeds and switches a torch it imports later, and imports nothing itself.

Each case runs in a fresh interpreter: torch must not be imported when the trial
starts, as in a fresh Ray worker.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import numpy as np
import pytest

import raysweep
from raysweep.repro.determinism import DETERMINISM_ENV

START = (
    "import json, os, sys\n"
    "from raysweep.repro import import_hook\n"
    "from raysweep.repro.trial_start import TrialStart, started_trial\n"
    "out = {}\n"
)


def trial_env() -> dict[str, str]:
    """This environment without the determinism variables, with this sys.path importable."""
    env = {k: v for k, v in os.environ.items() if k not in DETERMINISM_ENV}
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return env


def run_python(code: str) -> dict[str, object]:
    """``code`` (which fills ``out``) in a fresh interpreter; ``out`` as it printed it."""
    done = subprocess.run(
        [sys.executable, "-c", START + code + "print(json.dumps(out))\n"],
        capture_output=True,
        text=True,
        timeout=180,
        env=trial_env(),
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def torch_draws(seed: int) -> list[float]:
    """What a torch seeded with ``seed`` draws first (torch.rand(4))."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    return [float(v) for v in torch.rand(4, generator=generator)]


def test_torch_imported_during_the_trial_is_seeded_and_switched() -> None:
    out = run_python(
        "with started_trial(TrialStart(seed=77, deterministic=True, threads=1)):\n"
        "    out['before'] = 'torch' in sys.modules\n"
        "    out['env'] = os.environ.get('CUBLAS_WORKSPACE_CONFIG')\n"
        "    import torch\n"
        "    out['draws'] = torch.rand(4).tolist()\n"
        "    out['initial_seed'] = torch.initial_seed()\n"
        "    out['deterministic'] = torch.are_deterministic_algorithms_enabled()\n"
        "    out['cudnn'] = [torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark]\n"
        "    out['threads'] = torch.get_num_threads()\n"
        "    out['hooked'] = import_hook._FINDER in sys.meta_path\n"
    )
    assert out["before"] is False  # the trial start itself imported nothing
    assert out["env"] == ":4096:8"  # exported before the trial could initialise CUDA
    assert out["initial_seed"] == 77
    assert out["draws"] == pytest.approx(torch_draws(77), abs=0)
    assert out["deterministic"] is True and out["cudnn"] == [True, False]
    assert out["threads"] == 1
    assert out["hooked"] is False  # it removed itself once torch was imported


def test_deterministic_off_is_applied_on_import_too() -> None:
    out = run_python(
        "with started_trial(TrialStart(seed=5, deterministic=False)):\n"
        "    import torch\n"
        "    out['deterministic'] = torch.are_deterministic_algorithms_enabled()\n"
        "    out['initial_seed'] = torch.initial_seed()\n"
        "    out['env'] = os.environ.get('CUBLAS_WORKSPACE_CONFIG')\n"
    )
    assert out == {"deterministic": False, "initial_seed": 5, "env": None}


def test_a_trial_without_torch_imports_nothing_and_unhooks() -> None:
    """A GBM-like trial: numpy only. torch is never imported; a later import is not seeded."""
    out = run_python(
        "import numpy as np, random\n"
        "with started_trial(TrialStart(seed=77, deterministic=True, threads=1)):\n"
        "    out['numpy'] = float(np.random.random())\n"
        "    out['random'] = random.random()\n"
        "out['torch_imported'] = 'torch' in sys.modules\n"
        "out['hooked'] = import_hook._FINDER in sys.meta_path\n"
        "import torch\n"
        "out['later_seed'] = torch.initial_seed()\n"
    )
    assert out["torch_imported"] is False and out["hooked"] is False
    assert out["later_seed"] != 77  # the next trial seeds it at its start
    assert out["numpy"] == float(np.random.RandomState(77).random_sample())
    assert out["random"] == random.Random(77).random()


def test_an_imported_torch_is_seeded_at_the_start() -> None:
    out = run_python(
        "import torch\n"
        "torch.rand(10)\n"
        "with started_trial(TrialStart(seed=77, deterministic=True, threads=1)):\n"
        "    out['hooked'] = import_hook._FINDER in sys.meta_path\n"
        "    out['draws'] = torch.rand(4).tolist()\n"
        "    out['deterministic'] = torch.are_deterministic_algorithms_enabled()\n"
    )
    assert out["hooked"] is False
    assert out["draws"] == pytest.approx(torch_draws(77), abs=0)
    assert out["deterministic"] is True


def loader_draws(seed: int) -> list[list[float]]:
    """Per item, what a DataLoader worker drew from random, NumPy and torch."""
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Draws(Dataset[list[float]]):
        def __len__(self) -> int:
            return 4

        def __getitem__(self, index: int) -> list[float]:
            return [random.random(), float(np.random.random()), float(torch.rand(1))]

    loader = DataLoader(
        Draws(), batch_size=1, shuffle=True, num_workers=2, multiprocessing_context="fork",
        **raysweep.dataloader_kwargs(seed),
    )  # fmt: skip
    return [[float(v) for v in batch] for batch in loader]


def test_dataloader_workers_repeat_and_differ_from_each_other() -> None:
    first = loader_draws(3)
    assert loader_draws(3) == first
    assert loader_draws(4) != first
    numpy_draws = [row[1] for row in first]
    assert len(set(numpy_draws)) == len(numpy_draws)  # forked workers would share one state
