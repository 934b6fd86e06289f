"""The local engine (``"execution": "local"``): sweeps run in this process, without Ray."""
