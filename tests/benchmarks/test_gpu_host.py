"""Packing wheels for an offline GPU host and rebuilding them there (no download)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

TOOL = Path(__file__).resolve().parents[2] / "tools" / "gpu_host.py"


def _load_tool() -> ModuleType:
    """The tool as the host runs it: a plain file, not part of an installed package."""
    spec = importlib.util.spec_from_file_location("gpu_host", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_tool = _load_tool()
MANIFEST, NEVER, bundle, read_have = _tool.MANIFEST, _tool.NEVER, _tool.bundle, _tool.read_have
runtime_closure, unpack = _tool.runtime_closure, _tool.unpack


def make_wheel(folder: Path, name: str, size: int) -> Path:
    """A zip with one member of ``size`` random (incompressible) bytes."""
    path = folder / name
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("pkg/data.bin", os.urandom(size))
    return path


def members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as z:
        return {name: z.read(name) for name in z.namelist()}


def test_bundles_stay_under_the_limit_and_rebuild_every_wheel(tmp_path: Path) -> None:
    wheels = [
        make_wheel(tmp_path, "a-1.0-py3-none-any.whl", 6000),
        make_wheel(tmp_path, "b-1.0-py3-none-any.whl", 1500),
    ]
    stale = tmp_path / "packed" / "bundle-07"  # left by an earlier pack: removed
    stale.mkdir(parents=True)
    (stale / "old.whl.xz.00").write_bytes(b"x")
    manifest = bundle(wheels, tmp_path / "packed", limit=4000)
    folders = sorted((tmp_path / "packed").glob("bundle-*"))
    assert [f.name for f in folders] == ["bundle-01", "bundle-02"]
    sizes = [sum(p.stat().st_size for p in f.iterdir() if p.name != MANIFEST) for f in folders]
    assert sizes == manifest["bundle_bytes"] and max(sizes) <= 4000
    assert [len(w["parts"]) for w in manifest["wheels"]] == [2, 1]  # a is split, b is not

    merged = tmp_path / "merged"  # every bundle copied into one folder, as on the host
    merged.mkdir()
    for folder in folders:
        for part in folder.iterdir():
            shutil.copy(part, merged / part.name)
    assert json.loads((merged / MANIFEST).read_text()) == manifest
    rebuilt = unpack(merged, tmp_path / "rebuilt")
    assert [p.name for p in rebuilt] == [w.name for w in wheels]
    for original, copy in zip(wheels, rebuilt, strict=True):
        assert members(copy) == members(original)
        with zipfile.ZipFile(copy) as z:  # stored: xz did the compressing
            assert {i.compress_type for i in z.infolist()} == {zipfile.ZIP_STORED}

    as_packed = unpack(tmp_path / "packed", tmp_path / "from-bundles")  # the folders as they are
    assert [members(p) for p in as_packed] == [members(p) for p in rebuilt]

    first = merged / manifest["wheels"][0]["parts"][0]
    first.write_bytes(first.read_bytes()[:-1] + b"\0")
    with pytest.raises(SystemExit, match=r"a-1\.0-py3-none-any\.whl: .*(checksum differs|damaged)"):
        unpack(merged, tmp_path / "again")
    first.unlink()
    with pytest.raises(SystemExit, match=r"a-1\.0-py3-none-any\.whl: parts .* are not in"):
        unpack(merged, tmp_path / "again")


def test_the_closure_is_what_raysweep_runs_on_without_torch_or_the_dashboard() -> None:
    closure = runtime_closure()
    assert {"ray", "optuna", "hyperopt", "lightgbm", "xgboost", "catboost", "pydantic"} <= set(
        closure
    )
    assert "opencensus" not in closure  # Ray's dashboard extra, not needed by the checks
    assert not [name for name in closure if NEVER.match(name)]  # torch, CUDA, raysweep
    assert "setuptools" not in closure  # needed by torch only: the host's torch has it
    assert "nvidia-ml-py" in closure  # NVML bindings, not a CUDA library


def test_have_reads_pip_list_freeze_and_commas(tmp_path: Path) -> None:
    listing = tmp_path / "have.txt"
    listing.write_text(
        "Package    Version\n---------- -------\nray 2.60.0\nPyYAML==6.0.3\n"
        "typing_extensions, nvidia-ml-py\n# a comment\n"
    )
    assert read_have(listing) == {"ray", "pyyaml", "typing-extensions", "nvidia-ml-py"}
    assert read_have(None) == set()


def run_tool(*args: str) -> subprocess.CompletedProcess[str]:
    """``python3 tools/gpu_host.py ...`` as docs/gpus.md writes it, from outside the repo."""
    return subprocess.run(
        [sys.executable, str(TOOL), *args], capture_output=True, text=True, timeout=60, cwd="/"
    )


def test_the_documented_commands_parse_as_written() -> None:
    top = run_tool("--help")
    assert top.returncode == 0, top.stderr
    assert "pack" in top.stdout and "check" in top.stdout
    pack = run_tool("pack", "--help")
    assert pack.returncode == 0, pack.stderr
    for flag in ("--python", "--have", "--bundle-mb"):
        assert flag in pack.stdout
    check = run_tool("check", "--help")
    assert check.returncode == 0, check.stderr
    assert "--only" in check.stdout and "--repeats" in check.stdout and "--workers" in check.stdout
    bad = run_tool("check", "w", "o", "--workers", "0")
    assert bad.returncode == 2 and "--workers: at least 1 (got 0)" in bad.stderr


def test_with_workers_the_mps_tests_run_alone_after_the_others() -> None:
    (one,) = _tool.pytest_runs()
    assert one[0] == "pytest" and "-n" not in one[1] and one[1][-1] == "--junitxml={out}/junit.xml"
    rest, mps = _tool.pytest_runs(workers=3)
    assert rest[1][rest[1].index("-n") + 1] == "3" and f"--ignore={_tool.MPS_TESTS}" in rest[1]
    assert mps == ("pytest-mps", [*mps[1][:-2], "--junitxml={out}/junit-mps.xml",
                                  _tool.MPS_TESTS])  # fmt: skip
    named = _tool.pytest_runs(["tests/gpu", f"{_tool.MPS_TESTS}::test_x"], workers=2)
    assert [(name, args[-1]) for name, args in named] == [
        ("pytest", "tests/gpu"), ("pytest-mps", f"{_tool.MPS_TESTS}::test_x")
    ]  # fmt: skip
    assert [name for name, _ in _tool.pytest_runs(["tests/gpu"], workers=2)] == ["pytest"]
    assert (TOOL.parents[1] / _tool.MPS_TESTS).is_file()


def test_pack_without_a_destination_or_with_a_bad_size_exits_2() -> None:
    missing = run_tool("pack")
    assert missing.returncode == 2 and "dest" in missing.stderr
    bad = run_tool("pack", "wheels", "--bundle-mb", "lots")
    assert bad.returncode == 2 and "lots" in bad.stderr
