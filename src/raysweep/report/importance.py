"""Parameter importance, computed by Optuna's importance evaluators from the trials.

fANOVA (Optuna's default evaluator: a random forest fitted to the trials, then a
functional ANOVA of it) for up to :data:`FANOVA_MAX_TRIALS` trials, with
:data:`FANOVA_TREES` trees instead of Optuna's 64: its cost is linear in the
trees (1.56 s with 64 against 0.45 s with 16 at 200 trials on a 2-core VM) and
the values moved less from 64 trees to 16 than from one seed to another. Past
that count its cost grows faster than linearly, so bigger sweeps use PED-ANOVA,
Optuna's evaluator for many trials (~0.3 s for 10,000). The report names the
one used. Both are deterministic here (fixed seed), so a regenerated report is
identical.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import optuna

FANOVA_MAX_TRIALS = 200
FANOVA_TREES = 16
SEED = 0


@dataclass(frozen=True)
class Importance:
    """Importance of each parameter (sums to 1), most important first."""

    evaluator: str  # e.g. "fANOVA (optuna.importance.FanovaImportanceEvaluator, seed 0)"
    trials: int  # how many trials it was computed from
    values: dict[str, float]

    def ranked(self) -> list[tuple[str, float]]:
        return list(self.values.items())


def compute_importance(study: optuna.Study | None) -> Importance | None:
    """Importance over the study's complete trials (None with fewer than 2 or no parameter)."""
    if study is None:
        return None
    trials = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    params = {name for t in trials for name in t.params}
    if len(trials) < 2 or not params:
        return None
    evaluator: optuna.importance.BaseImportanceEvaluator
    if len(trials) <= FANOVA_MAX_TRIALS:
        evaluator = optuna.importance.FanovaImportanceEvaluator(n_trees=FANOVA_TREES, seed=SEED)
        name = (
            f"fANOVA (optuna.importance.FanovaImportanceEvaluator, {FANOVA_TREES} trees, "
            f"seed {SEED})"
        )
    else:
        evaluator = optuna.importance.PedAnovaImportanceEvaluator()
        name = (
            "PED-ANOVA (optuna.importance.PedAnovaImportanceEvaluator; fANOVA is used up to "
            f"{FANOVA_MAX_TRIALS} trials)"
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ExperimentalWarning and the like
        try:
            values = optuna.importance.get_param_importances(
                study, evaluator=evaluator, normalize=True
            )
        except (ValueError, RuntimeError):  # e.g. every trial has the same value
            return None
    ranked = sorted(((k, float(v)) for k, v in values.items()), key=lambda kv: (-kv[1], kv[0]))
    return Importance(evaluator=name, trials=len(trials), values=dict(ranked))


def format_importance(importance: Importance | None) -> str:
    """report.txt's importance ranking."""
    if importance is None:
        return "Parameter importance: not computed (needs 2 or more trials with the metric)"
    lines = [f"Parameter importance ({importance.evaluator}, {importance.trials} trials):"]
    width = max(len(name) for name in importance.values)
    for rank, (name, value) in enumerate(importance.ranked(), 1):
        bar = "#" * round(value * 40)
        lines.append(f"  {rank:>2}. {name:<{width}}  {value:6.3f}  {bar}")
    return "\n".join(lines)
