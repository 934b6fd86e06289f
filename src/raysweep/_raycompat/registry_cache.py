"""Ray Tune's trainable registry, read once per fit instead of several times per trial.

Ray Tune looks its trainable up in Ray's GCS key-value store for every trial:
``Trial.__init__`` checks it exists, placement-group set-up and actor start-up
fetch and unpickle it again, each a blocking round trip to the GCS (about a
quarter of the driver's CPU per trial on a 2-core VM, measured with py-spy on
400 no-op trials). Within one ``Tuner.fit()`` the registered trainable does not
change, so answers are memoized for its duration; any (un)registration drops
them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from raysweep._raycompat.switch import perf_patch_applies

_MISSING = object()
Memo = dict[tuple[str, str, str], Any]  # ("get" | "has", category, key) -> answer


@contextmanager
def memoized_registry() -> Iterator[None]:
    """Memoize trainable lookups in Ray Tune's global registry while the block runs."""
    registry = _global_registry() if perf_patch_applies() else None
    if registry is None or getattr(registry, "_raysweep_memo", None) is not None:
        yield  # switched off, a Ray Tune without these internals, or already memoized
        return
    memo: Memo = {}
    originals = {name: getattr(registry, name) for name in _WRAPPED}
    registry._raysweep_memo = memo
    for name, wrap in _WRAPPED.items():
        setattr(registry, name, wrap(originals[name], memo))
    try:
        yield
    finally:
        for name in _WRAPPED:
            delattr(registry, name)  # back to the class's own methods
        registry._raysweep_memo = None


def _memo_get(original: Callable[..., Any], memo: Memo) -> Any:
    def get(category: str, key: str) -> Any:
        value = memo.get(("get", category, key), _MISSING)
        if value is _MISSING:
            value = memo[("get", category, key)] = original(category, key)
        return value

    return get


def _memo_contains(original: Callable[..., Any], memo: Memo) -> Any:
    def contains(category: str, key: str) -> bool:
        if ("has", category, key) in memo:
            return True
        found = bool(original(category, key))
        if found:  # an absent key may be registered later: asked again
            memo[("has", category, key)] = True
        return found

    return contains


def _dropping(original: Callable[..., Any], memo: Memo) -> Any:
    def changed(*args: Any, **kwargs: Any) -> Any:
        memo.clear()
        return original(*args, **kwargs)

    return changed


_WRAPPED: dict[str, Callable[[Callable[..., Any], Memo], Any]] = {
    "get": _memo_get,
    "contains": _memo_contains,
    "register": _dropping,
    "unregister": _dropping,
    "unregister_all": _dropping,
}


def _global_registry() -> Any:
    try:
        from ray.tune.registry import _global_registry
    except ImportError:
        return None
    if not all(callable(getattr(_global_registry, name, None)) for name in _WRAPPED):
        return None
    return _global_registry
