"""The one-shot post-import hook: fires after the module's own code, once, then is gone."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import re
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from raysweep.repro import import_hook
from raysweep.repro.import_hook import when_imported


def hooks_in_meta_path() -> int:
    return sum(finder is import_hook._FINDER for finder in sys.meta_path)


@pytest.fixture
def fresh_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The name of a module on sys.path that nobody has imported; forgotten afterwards."""
    name = f"raysweep_hook_probe_{abs(hash(tmp_path)) % 10**8}"
    (tmp_path / f"{name}.py").write_text("import random\nDRAW = random.random()\nLOADED = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)
    assert hooks_in_meta_path() == 0


def test_action_runs_once_after_the_module_executed(fresh_module: str) -> None:
    seen: list[ModuleType] = []

    def action(module: ModuleType) -> None:
        assert module.LOADED  # the module's own code ran first
        assert sys.modules[fresh_module] is module
        seen.append(module)

    with when_imported(fresh_module, action):
        assert hooks_in_meta_path() == 1 and import_hook.watching() == [fresh_module]
        module = __import__(fresh_module)
        assert seen == [module]
        assert hooks_in_meta_path() == 0 and import_hook.watching() == []  # it took itself off
        sys.modules.pop(fresh_module)
        __import__(fresh_module)  # imported again in the same block: nothing more
    assert seen == [module]
    assert isinstance(module.__loader__, importlib.machinery.SourceFileLoader)
    assert module.__spec__ is not None and module.__spec__.loader is module.__loader__


def test_a_spec_found_but_not_loaded_answers_like_the_real_one(fresh_module: str) -> None:
    """``importlib.util.find_spec`` inside the block: the spec's loader still answers."""
    with when_imported(fresh_module, lambda module: None):
        spec = importlib.util.find_spec(fresh_module)
        assert spec is not None and spec.loader is not None
        assert spec.loader.get_filename(fresh_module).endswith(f"{fresh_module}.py")  # type: ignore[attr-defined]
        assert spec.loader.is_package(fresh_module) is False  # type: ignore[attr-defined]
    assert fresh_module not in sys.modules


def test_a_block_without_the_import_leaves_nothing_behind(fresh_module: str) -> None:
    seen: list[ModuleType] = []
    with when_imported(fresh_module, seen.append):
        assert hooks_in_meta_path() == 1
    assert hooks_in_meta_path() == 0 and import_hook.watching() == []
    __import__(fresh_module)  # after the block: not watched any more
    assert seen == [] and fresh_module not in import_hook.watching()


def test_an_imported_module_is_not_watched(fresh_module: str) -> None:
    __import__(fresh_module)
    seen: list[ModuleType] = []
    with when_imported(fresh_module, seen.append):
        assert hooks_in_meta_path() == 0
    assert seen == []


def test_an_error_of_the_action_fails_the_import(fresh_module: str) -> None:
    def action(module: ModuleType) -> None:
        raise RuntimeError("cannot prepare")

    with when_imported(fresh_module, action), pytest.raises(RuntimeError, match="cannot prepare"):
        __import__(fresh_module)
    assert hooks_in_meta_path() == 0


def test_the_importing_threads_action_runs(fresh_module: str) -> None:
    """Two trials in threads wait for the module: the one that imports it prepares it."""
    ran: list[str] = []
    both_open, imported = threading.Barrier(2), threading.Event()

    def trial(name: str, imports: bool) -> None:
        with when_imported(fresh_module, lambda module: ran.append(name)):
            both_open.wait(timeout=30)
            if imports:
                __import__(fresh_module)
                imported.set()
            imported.wait(timeout=30)

    threads = [threading.Thread(target=trial, args=(name, name == "first")) for name in
               ("first", "second")]  # fmt: skip
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert ran == ["first"]
    assert hooks_in_meta_path() == 0 and import_hook.watching() == []


def test_many_threads_opening_and_closing_blocks_leave_meta_path_clean(fresh_module: str) -> None:
    before = list(sys.meta_path)

    def open_and_close() -> None:
        for _ in range(200):
            with when_imported(fresh_module, lambda module: None):
                pass

    threads = [threading.Thread(target=open_and_close) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sys.meta_path == before and import_hook.watching() == []


def test_only_top_level_modules() -> None:
    only = re.escape("top-level modules only (got 'torch.cuda')")
    with pytest.raises(ValueError, match=only), when_imported("torch.cuda", lambda module: None):
        pass
