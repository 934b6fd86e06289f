"""One handshake with a cluster's GCS before ``ray.init``: a refused token known at once.

A cluster started with ``RAY_AUTH_MODE=token`` refuses a client without its
token. ``ray.init(address=...)`` then tries the GCS 20 times, a second apart,
and raises a ``ConnectionError`` whose cause holds the refusal as the text of a
traceback (20 s on Ray 2.60, loopback). Ray's own ``GcsClient`` makes the same
handshake once, with the token ``ray.init`` would send, and raises Ray's public
``AuthenticationError`` at the first refusal (9 ms on loopback).

With ``RAY_AUTH_MODE=token`` and no token anywhere, ``GcsClient`` aborts the
whole process (a failed check in Ray's native token loader); Ray's own token
check, which ``ray.init`` runs before it connects, raises ``AuthenticationError``
instead, so it runs first here too.
"""

from __future__ import annotations


def gcs_handshake(address: str) -> None:
    """Connect to the GCS at ``address`` once, as ``ray.init`` would, and disconnect.

    ``ray.exceptions.AuthenticationError`` when this client has no token or the
    GCS refuses it; Ray's other errors (a GCS that does not answer) pass through.
    """
    from ray._private.authentication.authentication_token_setup import (
        ensure_token_if_auth_enabled,
    )
    from ray._raylet import GcsClient  # type: ignore[attr-defined]  # Cython, no stub

    ensure_token_if_auth_enabled(None, create_token_if_missing=False)
    GcsClient(address=address)
