"""raysweep: reproducible, checkpointed hyperparameter sweeps on Ray Tune."""

from raysweep.trainables.context import trial_context, trial_seed

__all__ = ["__version__", "trial_context", "trial_seed"]
__version__ = "0.1.0"
