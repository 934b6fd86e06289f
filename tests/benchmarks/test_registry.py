"""benchmarks/registry.py: every benchmark module registered once, in the folder its row says."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from benchmarks.registry import BENCHMARKS, BY_NAME, QUICK_SUITE, SUITE, render_table

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
TOP_LEVEL = {"__init__.py", "run.py", "registry.py"}  # beside the folders, no benchmark


def modules_in(folder: str) -> set[str]:
    return {p.stem for p in (BENCH / folder).glob("*.py")} - {"__init__"}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return found


def test_every_benchmark_module_is_registered_once_and_nothing_else_is() -> None:
    names = [b.name for b in BENCHMARKS]
    assert len(names) == len(set(names)), names
    assert modules_in("suite") == set(SUITE)
    assert modules_in("standalone") == set(names) - set(SUITE)
    assert {p.name for p in BENCH.glob("*.py")} == TOP_LEVEL
    for b in BENCHMARKS:
        assert (BENCH.parent / f"{b.module.replace('.', '/')}.py").is_file(), b.module


def test_the_suite_rows_have_a_run_function_and_the_standalone_ones_refuse() -> None:
    assert set(QUICK_SUITE) <= set(SUITE)
    assert QUICK_SUITE.index("overhead") < QUICK_SUITE.index("first_trial")  # it reuses its runs
    for name in SUITE:
        assert callable(BY_NAME[name].run_function())
    standalone = next(b for b in BENCHMARKS if not b.suite)
    with pytest.raises(ValueError, match=standalone.name):
        standalone.run_function()


def test_harness_and_workloads_import_no_benchmark_and_the_suite_no_standalone_one() -> None:
    standalone = {b.module for b in BENCHMARKS if not b.suite} | {"benchmarks.standalone"}
    benchmark_modules = {b.module for b in BENCHMARKS} | {"benchmarks.suite", *standalone}
    for folder in ("harness", "workloads"):
        for path in (BENCH / folder).glob("*.py"):
            assert not imported_modules(path) & benchmark_modules, path
    for path in (BENCH / "suite").glob("*.py"):  # standalone ones build on the suite's
        assert not imported_modules(path) & standalone, path
    for path in (BENCH / "harness").glob("*.py"):  # one way: workloads use the harness
        assert not [m for m in imported_modules(path) if m.startswith("benchmarks.workloads")], path


def module_graph() -> dict[str, set[str]]:
    """``benchmarks.*`` module -> the ``benchmarks.*`` modules it imports, anywhere in its body."""
    paths = {".".join(p.relative_to(BENCH.parent).with_suffix("").parts): p
             for p in BENCH.rglob("*.py")}  # fmt: skip
    names = {m.removesuffix(".__init__") for m in paths}
    graph: dict[str, set[str]] = {}
    for module, path in paths.items():
        found = set()
        for imported in imported_modules(path):
            while imported and imported not in names:  # benchmarks.x.NAME -> benchmarks.x
                imported = imported.rpartition(".")[0]
            found |= {imported} - {"", module.removesuffix(".__init__")}
        graph[module.removesuffix(".__init__")] = found
    return graph


def test_no_import_cycle_in_benchmarks() -> None:
    graph = module_graph()
    assert "benchmarks.harness.common" in graph["benchmarks.harness.launch"]  # the scan sees

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in graph[start] - seen:
            seen.add(nxt)
            if nxt == goal or reaches(nxt, goal, seen):
                return True
        return False

    cycles = [m for m in graph if reaches(m, m, set())]
    assert not cycles, cycles


def test_list_prints_every_registered_benchmark_with_its_commands() -> None:
    listing = subprocess.run(
        [sys.executable, "-m", "benchmarks.run", "--list"],
        cwd=BENCH.parent, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert listing.returncode == 0, listing.stderr
    assert listing.stdout.strip() == render_table()
    for b in BENCHMARKS:
        assert f"| {b.name} |" in listing.stdout and f"`{b.command}`" in listing.stdout
        assert b.command.startswith(f"python -m benchmarks.run {b.name}")


def test_run_names_a_standalone_benchmark_it_does_not_run() -> None:
    refused = subprocess.run(
        [sys.executable, "-m", "benchmarks.run", "--only", "resume_bench"],
        cwd=BENCH.parent, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert refused.returncode == 2
    assert "resume_bench" in refused.stderr and "standalone" in refused.stderr
    assert "python -m benchmarks.run NAME" in refused.stderr  # how to run it instead


def test_an_unknown_name_is_an_error_naming_the_known_ones() -> None:
    refused = subprocess.run(
        [sys.executable, "-m", "benchmarks.run", "no_such_bench", "--quick"],
        cwd=BENCH.parent, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert refused.returncode == 2
    assert "'no_such_bench'" in refused.stderr
    assert all(name in refused.stderr for name in BY_NAME), refused.stderr


def test_help_explains_the_suite_and_the_one_benchmark_forms() -> None:
    shown = subprocess.run(
        [sys.executable, "-m", "benchmarks.run", "--help"],
        cwd=BENCH.parent, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    assert "python -m benchmarks.run [--quick] [--only NAMES]" in shown.stdout
    assert "python -m benchmarks.run NAME [NAME's own flags]" in shown.stdout
    assert all(name in shown.stdout for name in BY_NAME)


@pytest.mark.parametrize("name", ["validate_time", "overhead"])
def test_a_name_hands_everything_after_it_to_that_benchmarks_main(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib

    from benchmarks import run

    seen: list[list[str]] = []
    module = importlib.import_module(BY_NAME[name].module)
    monkeypatch.setattr(module, "main", lambda argv: seen.append(list(argv)) or 7)
    assert run.main([name, "--repeats", "1", "--only", "x"]) == 7
    assert seen == [["--repeats", "1", "--only", "x"]]


@pytest.mark.parametrize("name", list(BY_NAME))
def test_each_benchmarks_documented_flags_are_its_own(name: str) -> None:
    """Every flag the table prints is one ``python -m benchmarks.run NAME --help`` lists."""
    bench = BY_NAME[name]
    shown = subprocess.run(
        [sys.executable, "-m", "benchmarks.run", name, "--help"],
        cwd=BENCH.parent, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith(f"usage: python -m benchmarks.run {name} ")
    words = f"{bench.usage} {bench.quick}".split()
    flags = [w.strip("[]") for w in words if w.startswith(("--", "[--"))]
    assert flags
    for flag in flags:
        assert flag in shown.stdout, (name, flag)


def test_every_command_the_benchmark_pages_and_kept_result_name_runs_a_module_that_exists() -> None:
    """A section rewritten from an older result must not bring back a moved module's path."""
    import importlib.util
    import re

    pages = [BENCH / "BENCHMARKS.md", BENCH / "PROTOCOL.md", BENCH / "figures/search_quality.json"]
    named = {m for page in pages for m in re.findall(r"python -m (benchmarks(?:\.\w+)+)",
                                                     page.read_text(encoding="utf-8"))}  # fmt: skip
    assert "benchmarks.run" in named
    assert [m for m in sorted(named) if importlib.util.find_spec(m) is None] == []


def test_benchmarks_md_has_each_suite_section_once_and_the_registry_table() -> None:
    """benchmarks.run rewrites these sections; a lost marker would drop a figure silently."""
    text = (BENCH / "BENCHMARKS.md").read_text(encoding="utf-8")
    for name in ("targets", *SUITE):
        assert text.count(f"<!-- bench:{name}:start -->") == 1, name
        assert text.count(f"<!-- bench:{name}:end -->") == 1, name
        assert text.index(f"<!-- bench:{name}:start -->") < text.index(f"<!-- bench:{name}:end -->")
    assert render_table() in text  # python -m benchmarks.run --list and the page agree
    for b in BENCHMARKS:
        if not b.suite:
            assert f"python -m benchmarks.run {b.name}" in text.split("## Standalone benchmarks")[1]
