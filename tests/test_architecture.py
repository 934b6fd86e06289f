"""The package's shape: no import cycles between modules, Ray's internals only in _raycompat.

Every import counts, including those inside functions and under TYPE_CHECKING:
a cycle hidden in a function is still a cycle in the design.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "raysweep"
COMPAT = f"{PACKAGE}._raycompat"


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted((SRC / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imports(module: str, path: Path) -> Iterator[tuple[str, int]]:
    """(imported module or module.name, line) of every import statement in the file."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")
                anchor = anchor if is_package else anchor[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                yield f"{base}.{alias.name}", node.lineno
            yield base, node.lineno


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        for name, _ in _imports(module, path):
            target = name
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != module and not module.startswith(f"{target}."):
                graph[module].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_walker_finds_a_cycle_hidden_in_a_function() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_no_import_cycle_between_modules() -> None:
    graph = _graph()
    assert len(graph) > 50  # the walk found the package
    assert _cycles(graph) == []


def _private_ray(name: str) -> bool:
    parts = name.split(".")
    if parts[0] != "ray":
        return False
    return any(p.startswith("_") or p == "_internal" for p in parts[1:])


def test_ray_private_api_is_used_only_in_the_compatibility_package() -> None:
    offenders = []
    for module, path in _modules().items():
        if module == COMPAT or module.startswith(f"{COMPAT}."):
            continue
        for name, line in _imports(module, path):
            if _private_ray(name):
                offenders.append(f"{path.relative_to(SRC)}:{line}: {name}")
    assert offenders == []


def test_read_only_modules_import_no_ray_at_all() -> None:
    """rundir and views serve status/best/list/report, which must stay instant."""
    modules = _modules()
    for module in (f"{PACKAGE}.rundir", f"{PACKAGE}.views", f"{COMPAT}.experiment_state"):
        names = [n for n, _ in _imports(module, modules[module])]
        assert not [n for n in names if n == "ray" or n.startswith("ray.")], module


# Each engine is a subpackage of engines/ (ray, local); the modules beside them are the seam.
ENGINE_PACKAGES = tuple(
    f"{PACKAGE}.engines.{folder.name}"
    for folder in sorted((SRC / PACKAGE / "engines").iterdir())
    if (folder / "engine.py").is_file()
)
SEAM = tuple(
    f"{PACKAGE}.engines.{path.stem}"
    for path in sorted((SRC / PACKAGE / "engines").glob("*.py"))
    if path.stem != "__init__"
)
UPWARD = (f"{PACKAGE}.api", f"{PACKAGE}.cli")
# Where ``execution`` may be compared: the registry that picks an engine by it.
ENGINE_SELECTION = {f"{PACKAGE}.engines.registry"}


def _package_of(module: str, packages: tuple[str, ...]) -> str | None:
    return next((p for p in packages if module == p or module.startswith(f"{p}.")), None)


def _edges(graph: dict[str, set[str]], sources: tuple[str, ...],
           targets: tuple[str, ...]) -> list[str]:  # fmt: skip
    """``module -> target`` for every import from a module under ``sources`` into one under
    ``targets``."""
    return [
        f"{module} -> {target}"
        for module, imported in graph.items()
        if _package_of(module, sources)
        for target in imported
        if _package_of(target, targets)
    ]


def test_the_engines_import_neither_each_other_nor_upward() -> None:
    graph = _graph()
    assert len(ENGINE_PACKAGES) == 2  # the walk found both engines
    assert all(any(m.startswith(f"{p}.") for m in graph) for p in ENGINE_PACKAGES)
    offenders = []
    for module, targets in graph.items():
        home = _package_of(module, ENGINE_PACKAGES)
        if home is None:
            continue
        for target in targets:
            other = _package_of(target, ENGINE_PACKAGES)
            if (other is not None and other != home) or _package_of(target, UPWARD):
                offenders.append(f"{module} -> {target}")
    assert offenders == []


def test_the_run_layer_and_the_seam_import_no_engine() -> None:
    """raysweep.run sits below both engines; engines/ names them only as lazy references."""
    graph = _graph()
    below = (f"{PACKAGE}.run", *SEAM)
    offenders = _edges(graph, below, (*ENGINE_PACKAGES, *UPWARD))
    assert any(m.startswith(f"{PACKAGE}.run.") for m in graph)
    assert offenders == []


def _execution_comparisons(path: Path) -> list[int]:
    """Lines where ``<x>.execution`` or ``execution`` is compared (==, !=, in, is)."""

    def names_execution(node: ast.AST) -> bool:
        if isinstance(node, ast.Attribute):
            return node.attr == "execution"
        if isinstance(node, ast.Name):
            return node.id == "execution"
        return isinstance(node, ast.Constant) and node.value == "execution"

    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Compare) and any(
            names_execution(side) for side in (node.left, *node.comparators)
        ):
            lines.append(node.lineno)
    return lines


def test_the_walker_finds_an_execution_comparison(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text('if spec.execution == "local":\n    pass\nx = spec.execution\n')
    assert _execution_comparisons(sample) == [1]


def test_nothing_outside_engine_selection_asks_which_engine_runs() -> None:
    offenders = [
        f"{path.relative_to(SRC)}:{line}"
        for module, path in _modules().items()
        if module not in ENGINE_SELECTION
        for line in _execution_comparisons(path)
    ]
    assert offenders == []


def test_the_run_directory_and_the_results_import_nothing_above_them() -> None:
    """RunDir owns the run directory's files and results/ the records and formats it
    writes: neither imports the layers that read or produce them (report, run, the
    engines, the orchestrator)."""
    graph = _graph()
    below = (f"{PACKAGE}.rundir", f"{PACKAGE}.results")
    above = (f"{PACKAGE}.report", f"{PACKAGE}.run", f"{PACKAGE}.engines", *UPWARD,
             f"{PACKAGE}.nightly", f"{PACKAGE}.status", f"{PACKAGE}.views")  # fmt: skip
    assert f"{PACKAGE}.results.records" in graph[f"{PACKAGE}.rundir"]  # the walk sees the edge
    offenders = _edges(graph, below, above)
    assert offenders == []


def _calls(function: ast.FunctionDef) -> set[str]:
    """Names of the attributes and functions ``function`` calls."""
    names = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            func = node.func
            names.add(func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", ""))
    return names


def test_run_and_resume_are_sequenced_in_the_orchestrator_not_in_an_engine() -> None:
    """api.py checks, prepares and hands over for a new run and for a resume alike; what
    every resume keeps (the extension's spec.json, the recorded warm start) is settled
    there once, and no engine reads it on its own."""
    api = ast.parse((SRC / PACKAGE / "api.py").read_text(encoding="utf-8"))
    functions = {n.name: n for n in api.body if isinstance(n, ast.FunctionDef)}
    run_calls = _calls(functions["run_sweep"]) | _calls(functions["load_run_spec"])
    resume_calls = _calls(functions["resume_sweep"]) | _calls(functions["_resume"])
    for step in ("check_options", "prepare"):
        assert step in run_calls and step in resume_calls, step
    assert {"plan_resume", "resume"} <= resume_calls
    offenders = [
        f"{module}: {name}"
        for module, path in _modules().items()
        if _package_of(module, ENGINE_PACKAGES)
        for name in ("resumed_spec", "read_warm_start")
        if name in path.read_text(encoding="utf-8")
    ]
    assert offenders == []


# The layers that read trials only as raysweep's ``TrialView`` (results/trial_view.py)
TRIAL_READERS = (f"{PACKAGE}.report", f"{PACKAGE}.run", f"{PACKAGE}.results", f"{PACKAGE}.rundir",
                 f"{PACKAGE}.status", f"{PACKAGE}.nightly", f"{PACKAGE}.views",
                 *SEAM, *UPWARD)  # fmt: skip
ENGINE_TRIAL_TYPES = (f"{PACKAGE}.engines.local.trial", "ray.tune.experiment")


def _trial_probes(path: Path) -> list[int]:
    """Lines of ``getattr(<...trial...>, ...)``: asking an engine's trial what it has."""

    def names_a_trial(node: ast.AST) -> bool:
        name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", "")
        return "trial" in str(name).lower()

    return [
        node.lineno
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "getattr"
        and node.args
        and names_a_trial(node.args[0])
    ]


def test_the_walker_finds_a_trial_probe(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text('x = getattr(trial, "outcome", None)\ny = getattr(spec, "stop", None)\n')
    assert _trial_probes(sample) == [1]


def test_no_module_outside_an_engine_reads_an_engines_trial_type() -> None:
    """Engines hand over TrialViews: the layers above import neither engine's trial type
    and probe no trial object for what it happens to carry."""
    modules = _modules()
    offenders = [
        f"{module}:{line} imports {name}"
        for module, path in modules.items()
        if _package_of(module, TRIAL_READERS)
        for name, line in _imports(module, path)
        if _package_of(name, ENGINE_TRIAL_TYPES)
    ]
    offenders += [
        f"{module}:{line} probes a trial with getattr"
        for module, path in modules.items()
        if _package_of(module, TRIAL_READERS)
        for line in _trial_probes(path)
    ]
    assert any(_package_of(m, (f"{PACKAGE}.report",)) for m in modules)  # the walk found them
    assert offenders == []


# a scheduler's on_trial_* and the positional arguments it takes (its controller, the
# trial, the result); a searcher's on_trial_result/complete take a trial id, a result
SCHEDULER_CALLS = {"on_trial_add": 2, "on_trial_result": 3, "on_trial_complete": 3,
                   "on_trial_error": 2, "on_trial_remove": 2}  # fmt: skip
DECIDER = f"{PACKAGE}.schedulers.decider"


def _scheduler_calls(path: Path) -> list[int]:
    """Lines calling a scheduler's ``on_trial_*``, except in a method of the same name
    passing the call on to the scheduler it wraps."""
    found: list[int] = []

    def visit(node: ast.AST, function: str | None) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            function = node.name
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and len(node.args) >= SCHEDULER_CALLS.get(node.func.attr, 99)
            and function != node.func.attr
        ):
            found.append(node.lineno)
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(ast.parse(path.read_text(encoding="utf-8")), None)
    return sorted(found)


def test_the_walker_finds_a_scheduler_call(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "def replay(s, c, t):\n    s.on_trial_result(c, t, {})\n    q.on_trial_result('id', {})\n"
        "def on_trial_add(self, c, t):\n    self.inner.on_trial_add(c, t)\n"
    )
    assert _scheduler_calls(sample) == [2]


def test_ray_controllers_call_order_is_written_once() -> None:
    """Searcher, scheduler and stop rule are told of trials in Ray Tune's order by one class
    (schedulers/decider.py), for the local engine live, its replay and the Ray resume replay."""
    offenders = [
        f"{module}:{line}"
        for module, path in _modules().items()
        if module != DECIDER
        for line in _scheduler_calls(path)
    ]
    assert _scheduler_calls(_modules()[DECIDER])  # the walk sees the decider's own calls
    assert offenders == []


def test_the_orchestrator_and_the_read_only_commands_reach_engines_through_the_registry() -> None:
    """api.py, the CLI, views, status and the nightly service import no engine package:
    an engine (and ``sweep repro``'s rerun) is found through ``engines/registry.py``."""
    graph = _graph()
    front = (*UPWARD, f"{PACKAGE}.views", f"{PACKAGE}.status", f"{PACKAGE}.nightly",
             f"{PACKAGE}.cli_export", f"{PACKAGE}.cli_flags", f"{PACKAGE}.cli_legacy",
             f"{PACKAGE}.cli_nightly")  # fmt: skip
    offenders = _edges(graph, front, ENGINE_PACKAGES)
    assert f"{PACKAGE}.engines.registry" in graph[f"{PACKAGE}.api"]  # the walk sees api's edges
    assert offenders == []
