"""Trial schedulers: one small factory per type, built from Ray Tune's classes."""
