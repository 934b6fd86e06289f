"""The engine-neutral run layer both engines use from below (no Ray here).

Lock (``lock``), signals (``signals``), the run's states under its lock
(``lifecycle``), the progress display and heartbeat (``progress``, ``live``),
what a resume may change (``resume_spec``), and collect + write (``outputs``).
"""
