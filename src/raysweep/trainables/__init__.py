"""The trainables: built-ins (GBMs, torch_mlp), user functions, the trial wrapper and checks.

Importing the package (which importing any of its modules does first) registers the
space hooks through which a built-in's library aliases (and the trading entry
models') resolve to canonical names when sweep.json is loaded
(``raysweep.config.hooks``). ``import raysweep`` alone does not import it: the
commands that load a sweep.json do, through ``trainables.checks`` and
``trainables.builtins``.
"""

from raysweep.config.hooks import register_space_hook
from raysweep.trainables.params.resolve import resolve_space
from raysweep.trainables.trading.space import resolve_trading_space

register_space_hook(resolve_space)
register_space_hook(resolve_trading_space)
