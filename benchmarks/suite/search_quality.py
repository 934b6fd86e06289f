"""5. Search quality: raysweep's default recipes against peers, scored by benchmarks/PROTOCOL.md.

Problems (workloads/search_quality_problems.py): multi-fidelity Hartmann-3 and -6,
HPOLib's and NAS-Bench-201's recorded trainings (no fidelity axis), LightGBM on
breast_cancer and XGBoost on digits with boosting rounds as the fidelity and the
trading workload with its walk-forward folds as the fidelity, the last three scored on
held-out data the optimizers never see. Seeds: ``SEEDS`` per problem (``--repeats``
sets them all), the same seeds for everyone. Budget: ``--trials`` full-fidelity
evaluations' worth of fidelity steps (20 by default; 100 evaluations on the tabular
problems). raysweep runs through ``sweep run`` on a real clock, 4 trials at once
(workloads/search_quality_recipes.py: the scored recipes ``DEFAULT_WITH_FIDELITY``,
``DEFAULT_WITHOUT_FIDELITY`` and ``DEFAULT_STRICT``; the others are studies, run when
named with ``--recipes`` and reported apart, never scored); the peers through their own
APIs in ``.venv-peers`` on a simulated clock (search_quality_peers.py). Every optimizer
gets 4 workers, the same budget in fidelity steps and the same fidelity levels (min 1,
the problem's max, reduction factor 3, in each one's own terms); they are compared on
the budget spent, never on wall time.

Scoring (harness/protocol.py): at 10/25/50/100 % of the budget, the regret of what each
optimizer returns (harness/regret.py); per point the best peer, the ratio of medians,
the Wilcoxon signed-rank p and the seeds lower/equal/higher; the protocol's targets.
Output: a block per problem (its ratio table, every optimizer's regret table, curves
``<results>/search_quality-<problem>.png``), the targets; each run recorded under
``<results>/search_quality-runs/`` (``--reuse`` takes it from there).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.harness.common import REPO, RESULTS_DIR, load_result, log, target
from benchmarks.harness.launch import Launch, bench_result, launch_sweep, workdir
from benchmarks.harness.protocol import POINTS, STRICT_BOUND, score, strict_target, targets
from benchmarks.harness.quality_section import problem_lines, ratio_table
from benchmarks.harness.regret import final, markdown_table, plot, table
from benchmarks.workloads.search_quality_peers import peer_runs_on
from benchmarks.workloads.search_quality_problems import PROBLEMS, cannot_run, full_evals
from benchmarks.workloads.search_quality_recipes import (
    DEFAULT_STRICT,
    RECIPES,
    SLOTS,
    STUDIES,
    resolved_digest,
    runs_on,
    scored_on,
)
from benchmarks.workloads.search_quality_trading import PYTHON_ENV as TRADING_PYTHON_ENV

NAME = "search_quality"
# the result BENCHMARKS.md's section shows, kept in git (results/ is not): see keep()
KEPT = REPO / "benchmarks" / "figures" / f"{NAME}.json"
TITLE = "Search quality against peers"
PEERS = ("optuna-tpe", "optuna-tpe-sha", "optuna-tpe-hyperband", "dehb", "smac-mf", "syne-asha",
         "syne-bohb", "syne-asha-bore", "hpbandster-bohb", "smac-bo")  # fmt: skip
# the protocol's seeds (PROTOCOL.md): 30 where a run costs seconds (XGBoost: from its next run)
SEEDS = {"mfh3": 30, "mfh6": 30, "hpolib": 30, "nb201": 30, "lgbm": 30, "trading": 10,
         "xgb": 10}  # fmt: skip
Record = dict[str, Any]  # {"observations", "reference" (held-out problems), "slot_use"}
RECORDS = "own"  # how runs are recorded: each observation with its optimizer's own incumbent
PEERS_PYTHON_ENV = "RAYSWEEP_PEERS_PYTHON"
PEER_LIMIT_S = 4 * 3600  # one peer run on a loaded machine (trading, Syne Tune ASHA-BORE)
FULL_TRIALS = 20
# the quick variant (make bench-quick): one problem with a fidelity, 2 seeds, the scored
# recipes, two peers, a small budget
QUICK_PROBLEMS, QUICK_PEERS, QUICK_SEEDS, QUICK_TRIALS = ("mfh3",), ("optuna-tpe-sha", "dehb"), 2, 4


def peers_python() -> Path | None:
    """The peers' interpreter: ``$RAYSWEEP_PEERS_PYTHON`` or ``.venv-peers`` (None: absent)."""
    path = Path(os.environ.get(PEERS_PYTHON_ENV) or REPO / ".venv-peers" / "bin" / "python")
    return path if path.is_file() else None


def run_peer(python: Path, problem: str, peer: str, seed: int, budget: int) -> Record | str:
    """One peer's record, or the reason it did not run."""
    cmd = [str(python), "-m", "benchmarks.workloads.search_quality_peers", "--problem", problem,
           "--optimizer", peer, "--seed", str(seed), "--budget", str(budget),
           "--workers", str(SLOTS)]  # fmt: skip
    try:
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=PEER_LIMIT_S,
                              env={**os.environ, "PYTHONPATH": str(REPO),
                                   TRADING_PYTHON_ENV: sys.executable}, check=False)  # fmt: skip
    except subprocess.TimeoutExpired:
        return f"no result within {PEER_LIMIT_S} s"
    if proc.returncode != 0:
        return (proc.stderr.strip().splitlines() or ["no output"])[-1][:300]
    return dict(json.loads(proc.stdout))


def run_recipe(
    recipe: str, problem: str, seed: int, full: int
) -> tuple[Record | str, Launch | None]:
    """One ``sweep run`` of ``recipe``: its record, or why it did not run."""
    from benchmarks.workloads.search_quality_sweep_record import observations, slot_use
    from raysweep.config.load import parse_spec
    from raysweep.errors import ConfigError

    config = RECIPES[recipe](PROBLEMS[problem], seed, full)
    try:
        parse_spec(config)
    except ConfigError as e:
        return f"sweep run refuses it: {str(e).splitlines()[-1].strip()}", None
    with workdir(NAME) as tmp:
        launch = launch_sweep(f"{problem}/{recipe}/{seed}", config, tmp)
        if launch.returncode != 0:
            return f"sweep run exited {launch.returncode}", launch
        popen_t, run_dir = float(launch.extra["popen_t"]), Path(launch.run_dir or "")
        return {"observations": observations(run_dir, PROBLEMS[problem], popen_t),
                "slot_use": slot_use(run_dir, SLOTS),
                "reference": getattr(PROBLEMS[problem], "reference", None)}, launch  # fmt: skip


def run_problem(problem: str, seeds: list[int], n: int, recipes: Sequence[str] | None,
                peers: Sequence[str], python: Path | None, reuse: bool, results_dir: Path,
                png: Path, launches: list[Launch],
                recorded_only: bool = False) -> dict[str, Any]:  # fmt: skip
    """Every optimizer x seed on one problem, scored: the problem's block of the result.

    ``recorded_only``: score the recorded runs, launch none (a seed without a record is
    left out, and the block's notes say how many).
    """
    spec, notes = PROBLEMS[problem], []
    unrecorded: dict[str, int] = {}
    budget = n * spec.max_fidelity
    scored = scored_on(problem)
    names = [r for r in (scored if recipes is None else recipes) if runs_on(r, problem)]
    if python is None and peers and not recorded_only:
        notes.append(f"{problem}: peers not run: no peers' environment ({PEERS_PYTHON_ENV} or "
                     ".venv-peers; make .venv-peers/.installed)")  # fmt: skip
        log(notes[-1])  # said at once: a long run would otherwise score raysweep alone
    records: dict[str, dict[int, dict[str, Any]]] = {}
    for seed in seeds:
        log(f"{NAME}: {problem} seed {seed}")
        for recipe in names:
            name = f"raysweep: {recipe}"
            got = _cached(reuse or recorded_only, results_dir, problem, name, seed, n)
            if got is None and recorded_only:
                unrecorded[name] = unrecorded.get(name, 0) + 1
                continue
            if got is None:
                got, launch = run_recipe(recipe, problem, seed, n)
                launches += [launch] if launch else []
            _keep(records, name, got, notes, results_dir, problem, seed, n)
        for peer in peers if python or recorded_only else ():
            if peer_runs_on(peer, spec):
                name = f"peer: {peer}"
                got = _cached(reuse or recorded_only, results_dir, problem, name, seed, n)
                if got is None and recorded_only:
                    unrecorded[name] = unrecorded.get(name, 0) + 1
                    continue
                if got is None:
                    got = run_peer(python, problem, peer, seed, budget)  # type: ignore[arg-type]
                _keep(records, name, got, notes, results_dir, problem, seed, n)
    notes += [f"{problem} {name}: {k} of {len(seeds)} seeds not recorded, scored without them "
              "(--recorded-only)" for name, k in unrecorded.items()]  # fmt: skip
    runs = {k: {s: rebased(r, spec) for s, r in v.items()} for k, v in records.items()}
    plot(problem, runs, budget, png)
    default = runs.get(f"raysweep: {scored[0]}", {})
    rows = table(runs, budget, POINTS)
    cells = score(default, {k: v for k, v in runs.items() if k.startswith("peer: ")}, budget)
    block: dict[str, Any] = {"seeds": seeds, "full_evals": n, "fidelity_steps": spec.max_fidelity,
                             "default": scored[0], "cells": cells, "notes": notes,
                             "table": markdown_table(rows, POINTS), "final": final(rows),
                             "ratio_table": ratio_table(cells), "targets": []}  # fmt: skip
    strict = runs.get(f"raysweep: {DEFAULT_STRICT}")
    if strict and default:
        use = [r.get("slot_use") for r in records[f"raysweep: {DEFAULT_STRICT}"].values()]
        kept = sorted(u for u in use if u is not None)
        median = kept[len(kept) // 2] if kept else None
        block["targets"].append(strict_target(problem, strict, default, budget, median,
                                              len(seeds)))  # fmt: skip
    elif DEFAULT_STRICT in names:  # a target row all the same: not measured, and why
        why = next((n.split(": not run ")[-1] for n in notes if DEFAULT_STRICT in n), "no runs")
        block["targets"].append(target(f"{problem}: strict default / default median regret at "
                                       f"100% (not run: {why.strip('()')})", None, "<=",
                                       STRICT_BOUND))  # fmt: skip
    return block


def run(quick: bool = False, repeats: int | None = None, trials: int | None = None,
        problems: Sequence[str] | None = None, recipes: Sequence[str] | None = None,
        peers: Sequence[str] | None = None, reuse: bool = False,
        results_dir: Path = RESULTS_DIR,
        recorded_only: bool = False) -> dict[str, Any]:  # fmt: skip
    """Every problem x optimizer x seed, scored by the protocol.

    ``recipes`` None: the scored recipes of each problem; named: those (studies too).
    ``reuse``: take a (problem, optimizer, seed, budget) run recorded by an earlier
    invocation under ``results_dir`` instead of running it again; ``recorded_only``:
    launch nothing, score the recorded runs.
    """
    full = trials or (QUICK_TRIALS if quick else FULL_TRIALS)
    problems = problems or (QUICK_PROBLEMS if quick else tuple(PROBLEMS))
    peers = peers if peers is not None else (QUICK_PEERS if quick else PEERS)
    launches: list[Launch] = []
    blocks: dict[str, dict[str, Any]] = {}
    notes: list[str] = []
    python = peers_python()
    if python is None and quick:  # CI's smoke: Optuna's peers run in the project's environment
        python, peers = Path(sys.executable), [p for p in peers if p.startswith("optuna-")]
        notes.append("no peers' environment: Optuna's peers ran in the project's")
    for problem in problems:
        why = cannot_run(PROBLEMS[problem])
        if why is not None:
            notes.append(f"{problem} not run: {why}")
            log(notes[-1])
            continue
        seeds = list(range(1, 1 + (repeats or (QUICK_SEEDS if quick else SEEDS[problem]))))
        n = full if trials or quick else full_evals(PROBLEMS[problem], full)
        png = results_dir / f"{NAME}{'.quick' if quick else ''}-{problem}.png"
        blocks[problem] = run_problem(problem, seeds, n, recipes, peers, python, reuse,
                                      results_dir, png, launches, recorded_only)  # fmt: skip
    ran = list(blocks)
    missing = [p for p in (QUICK_PROBLEMS if quick else PROBLEMS) if p not in blocks]
    earlier = None if quick or not missing else earlier_result(results_dir)
    carried = carry_over(earlier, missing, trials, repeats, blocks)
    unscored = [p for p in missing if p not in carried]
    result = bench_result(TITLE, {"problems": list(blocks), "budget_full_evals": full,
                                  "slots": SLOTS, "points": list(POINTS)}, {},
                          protocol_targets(blocks, unscored), launches, notes=notes)  # fmt: skip
    result["problems"] = {p: blocks[p] for p in PROBLEMS if p in blocks}
    result["problems_run"] = ran
    result["section_lines"] = problem_lines(result["problems"], quick)
    fewer = [x for x in PEERS if x not in peers] if not quick else []
    partial = []
    if fewer or (recipes is not None and not quick):
        partial.append(
            f"{fewer or 'the scored recipes'} were left out or others named: "
            "rerun with the defaults and --reuse (recorded runs are not run again)"
        )
    if partial:
        result["partial"] = "; ".join(partial)
    return result


def rebased(record: Record, problem: Any) -> list[list[Any]]:
    """A run's observations with its regrets measured from the problem's reference today:
    a run recorded before the reference search was (re)done is shifted by the difference
    (a held-out regret is the held-out value minus the reference's)."""
    recorded, today = record.get("reference"), getattr(problem, "reference", None)
    if recorded is None or today is None or recorded == today:
        return list(record["observations"])
    shift = float(recorded) - float(today)
    return [[*obs[:3], obs[3] + shift, obs[4], None if obs[5] is None else obs[5] + shift]
            for obs in record["observations"]]  # fmt: skip


def protocol_targets(blocks: dict[str, dict[str, Any]],
                     unscored: Sequence[str] = ()) -> list[dict[str, Any]]:  # fmt: skip
    """The protocol's targets of every problem shown (run now or carried over), and a
    row "not measured" for each problem not scored yet."""
    cells = {p: b["cells"] for p, b in blocks.items() if b["cells"]}
    fidelity = {p: b["fidelity_steps"] > 1 for p, b in blocks.items()}
    out = targets(cells, fidelity)
    out += [target(f"{p}: the default / best peer at each budget point (not scored yet)",
                   None, "<=", 1.0) for p in unscored]  # fmt: skip
    for b in blocks.values():
        out += [{"taken": b["taken"], **t} if b.get("taken") else t for t in b["targets"]]
    return out


def earlier_result(results_dir: Path) -> dict[str, Any] | None:
    """This benchmark's last full result: the one in ``results_dir``, else the one
    BENCHMARKS.md shows (``KEPT``, kept in git, so a fresh checkout can refresh a
    problem at a time and keep the others' figures)."""
    found = load_result(results_dir, NAME, False)
    if found is None and KEPT.is_file():
        found = json.loads(KEPT.read_text(encoding="utf-8"))
    return found


def carry_over(earlier: dict[str, Any] | None, missing: Sequence[str], trials: int | None,
               repeats: int | None, blocks: dict[str, dict[str, Any]]) -> list[str]:  # fmt: skip
    """Keep from ``earlier`` the blocks of ``missing`` problems it ran with the seeds and
    budget this run would give them, each with the date and command it was taken with."""
    if earlier is None or earlier.get("params", {}).get("slots") != SLOTS:
        return []
    kept = []
    for problem in missing:
        block = earlier.get("problems", {}).get(problem)
        seeds = list(range(1, 1 + (repeats or SEEDS[problem])))
        n = trials or full_evals(PROBLEMS[problem], FULL_TRIALS)
        if block and block["seeds"] == seeds and block["full_evals"] == n:
            # its line in the section says when and by which command (quality_section.py)
            blocks[problem] = {"taken": earlier.get("date"), "command": earlier.get("command"),
                               **block}  # fmt: skip
            kept.append(problem)
    return kept


def keep(result: dict[str, Any], results_dir: Path) -> None:
    """Keep ``result`` as the one BENCHMARKS.md shows: its JSON without the launches
    (``KEPT``) and the curves of the problems it ran (``figures/``)."""
    import shutil

    kept = {k: v for k, v in result.items() if k != "runs"}
    KEPT.parent.mkdir(parents=True, exist_ok=True)
    KEPT.write_text(json.dumps(kept, indent=1, default=str) + "\n", encoding="utf-8")
    for problem in result.get("problems_run", []):
        png = results_dir / f"{NAME}-{problem}.png"
        if png.is_file():
            shutil.copyfile(png, kept_png(problem))
    log(f"{NAME}: kept {KEPT} and the curves of {result.get('problems_run', [])}")


def kept_png(problem: str) -> Path:
    return KEPT.parent / f"{NAME}-{problem}.png"


def _cache_path(where: Path, problem: str, name: str, seed: int, full: int) -> Path:
    slug = "".join(c if c.isalnum() else "_" for c in name)
    if name.startswith("raysweep: "):  # a recipe that resolves otherwise (a default changed)
        slug += "-" + resolved_digest(name.removeprefix("raysweep: "), problem, full)
    version = getattr(PROBLEMS[problem], "version", "")
    folder = f"{problem}{'-' + version if version else ''}-{full}-w{SLOTS}-{RECORDS}"
    return where / f"{NAME}-runs" / folder / f"{slug}-{seed}.json"


def _cached(reuse: bool, where: Path, problem: str, name: str, seed: int,
            full: int) -> dict[str, Any] | None:  # fmt: skip
    """A run recorded earlier with the same problem, budget and seed (``--reuse``)."""
    path = _cache_path(where, problem, name, seed, full)
    if not reuse or not path.is_file():
        return None
    log(f"{problem} {name} seed {seed}: reused {path.name}")
    record: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return record


def _keep(records: dict[str, dict[int, dict[str, Any]]], name: str, got: dict[str, Any] | str,
          notes: list[str], where: Path, problem: str, seed: int, full: int) -> None:  # fmt: skip
    if isinstance(got, str):
        refused = got.startswith("sweep run refuses")  # the same on every seed: said once
        note = f"{problem} {name}{'' if refused else f' seed {seed}'}: not run ({got})"
        if note not in notes:
            notes.append(note)
            log(note)
    elif got["observations"]:
        records.setdefault(name, {})[seed] = got
        path = _cache_path(where, problem, name, seed, full)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(got), encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m benchmarks.run search_quality [--quick] [--repeats SEEDS] [--trials N] ...``."""
    import functools

    from benchmarks.harness.cli import parser, run_and_report

    p = parser(__doc__.splitlines()[0], NAME)
    p.add_argument("--problems", default=None,
                   help=f"comma-separated subset of {sorted(PROBLEMS)}; the others keep the "
                   "figures of this benchmark's last result with the same seeds and budget "
                   "(--results-dir's, else the one BENCHMARKS.md shows, kept in "
                   "benchmarks/figures/search_quality.json)")  # fmt: skip
    p.add_argument("--recipes", default=None,
                   help="comma-separated raysweep recipes instead of the scored ones (the "
                   "protocol's defaults, search_quality_recipes.SCORED); a run naming them "
                   f"leaves BENCHMARKS.md alone. Studies: {list(STUDIES)}")  # fmt: skip
    p.add_argument(
        "--peers", default=None, help=f"comma-separated subset of {list(PEERS)} (empty: none)"
    )
    p.add_argument("--reuse", action="store_true", help="reuse runs recorded by earlier calls")
    p.add_argument("--recorded-only", action="store_true",
                   help="launch nothing: score the runs recorded by earlier calls (a seed "
                   "without a record is left out, and the notes say so)")  # fmt: skip
    args = p.parse_args(argv)
    chosen = {k: [x for x in (getattr(args, k) or "").split(",") if x]
              for k in ("problems", "recipes", "peers")}  # fmt: skip
    unknown = [x for k, known in (("problems", PROBLEMS), ("recipes", RECIPES), ("peers", PEERS))
               for x in chosen[k] if x not in known]  # fmt: skip
    if unknown:
        p.error(f"unknown problem, recipe or peer: {unknown}")
    extra = [f"--{k}={v}" for k in ("problems", "recipes", "peers")
             if (v := getattr(args, k)) is not None]  # fmt: skip
    extra += ["--reuse"] if args.reuse else []
    extra += ["--recorded-only"] if args.recorded_only else []
    func = functools.partial(run, problems=chosen["problems"] or None,
                             recipes=None if args.recipes is None else chosen["recipes"],
                             peers=None if args.peers is None else chosen["peers"],
                             reuse=args.reuse, results_dir=args.results_dir,
                             recorded_only=args.recorded_only)  # fmt: skip
    return run_and_report(NAME, func, args, extra)


if __name__ == "__main__":
    sys.exit(main())
