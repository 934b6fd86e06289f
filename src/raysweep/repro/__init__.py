"""Reproducibility: seeds, determinism switches, GBM parameters and the run manifest."""
