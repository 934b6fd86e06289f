"""A result without the sweep's metric: one error naming the metric and what was reported."""

from __future__ import annotations

from factories import make_spec
from raysweep.engines.ray.metric_check import missing_metric_error, reported_names, wanted_metrics
from raysweep.errors import MetricNotReported

RAY_KEYS = {"training_iteration": 1, "time_total_s": 0.1, "trial_id": "t", "done": False,
            "date": "x", "pid": 1, "config": {"x": 1.0}, "time_this_iter_s": 0.1}  # fmt: skip


def test_the_error_names_the_metric_and_what_the_trial_reported() -> None:
    error = missing_metric_error([("metric", "los")], "a1b2", {**RAY_KEYS, "loss": 1.0, "step": 1})
    assert isinstance(error, MetricNotReported) and error.exit_code == 1
    assert str(error) == (
        "metric: 'los' was not in what trial a1b2 reported; it reported: loss, step; did you "
        "mean loss? (fix metric in the config, or report 'los' with tune.report)"
    )


def test_nested_metrics_as_ray_flattens_them_and_results_with_nothing_of_the_trial() -> None:
    assert reported_names({**RAY_KEYS, "val": {"loss": 1.0}}) == ["val/loss"]
    assert missing_metric_error([("metric", "val/loss")], "t", {"val": {"loss": 1.0}}) is None
    assert missing_metric_error([("metric", "loss")], "t", RAY_KEYS) is None  # returned bare


def test_the_scheduler_metric_is_checked_too() -> None:
    spec = make_spec(
        metric=["loss", "step"],
        mode=["min", "max"],
        search={"algorithm": "random", "num_samples": 2},
        scheduler={"type": "asha", "metric": "acc", "mode": "max"},
    )
    assert wanted_metrics(spec) == [
        ("objectives", "loss"),
        ("objectives", "step"),
        ("scheduler.metric", "acc"),
    ]
    error = missing_metric_error(wanted_metrics(spec), "t", {"loss": 1.0, "step": 2})
    assert error is not None and str(error).startswith("scheduler.metric: 'acc' was not in")
