"""The in-process executor (``"execution": "local"``): sweeps without Ray."""
