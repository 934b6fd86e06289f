"""The concurrency limit a sweep gets when ``search.max_concurrent`` is unset."""

from __future__ import annotations

from typing import Any

from factories import quadratic_sweep
from raysweep.config.load import parse_spec
from raysweep.search.build import default_concurrency


def spec(scheduler: dict[str, Any], num_samples: int = 30) -> Any:
    return parse_spec(
        quadratic_sweep(
            name="s",
            space={"x": {"type": "uniform", "low": 0, "high": 1}},
            search={"algorithm": "random", "num_samples": num_samples},
            scheduler=scheduler,
            seed=0,
        )
    )


def test_hyperband_admits_every_trial_so_its_brackets_can_fill() -> None:
    hyperband = {"type": "hyperband", "max_t": 9, "reduction_factor": 3}
    assert default_concurrency(spec(hyperband, num_samples=30)) == 30
    assert default_concurrency(spec(hyperband, num_samples=1)) == 1
