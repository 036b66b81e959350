"""Latency: every method at scale, one stage inside the database, the first question after a start."""
