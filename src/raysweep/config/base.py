"""Base pydantic model: frozen, unknown keys refused with the list of valid ones."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

_FIELD_PREFIX = re.compile(r"^([A-Za-z_][\w.]*): (.*)$", re.DOTALL)
_UNION_TAGS = {"uniform", "loguniform", "quniform", "int", "choice", "grid"}
_SCHEDULER_TAGS = {"fifo", "asha", "hyperband", "median"}


class StrictModel(BaseModel):
    """Frozen model that names the valid keys when it meets an unknown one."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _refuse_unknown_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            valid = {f.alias or name for name, f in cls.model_fields.items()}
            unknown = sorted(k for k in data if k not in valid)
            if unknown:
                raise ValueError(
                    f"{unknown[0]}: unknown key; valid keys: {', '.join(sorted(valid))}"
                )
        return data


def format_error(err: Mapping[str, Any]) -> str:
    """One pydantic error as ``space.num_leaves.low: must be < high (got 300 >= 256)``."""
    loc = [str(p) for p in err.get("loc", ())]
    # drop discriminator tags pydantic inserts into union paths
    loc = [p for i, p in enumerate(loc) if not (i > 0 and p in _UNION_TAGS | _SCHEDULER_TAGS)]
    msg = str(err.get("msg", ""))
    msg = msg.removeprefix("Value error, ")
    match = _FIELD_PREFIX.match(msg)
    if match:
        loc.append(match.group(1))
        msg = match.group(2)
    if err.get("type") not in ("value_error", "assertion_error") and "input" in err:
        shown = json.dumps(err["input"], default=str)
        if len(shown) <= 80 and "(got" not in msg:
            msg = f"{msg} (got {shown})"
    path = ".".join(loc) or "config"
    return f"{path}: {msg}"
