"""The Ray engine (``"execution": "ray"``): start or join Ray, build Ray Tune's Tuner,
run each phase of a sweep, follow it, and stop what it started."""
