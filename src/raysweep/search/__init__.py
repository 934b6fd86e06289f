"""Searchers: one small factory per algorithm, built from Ray Tune's classes."""
