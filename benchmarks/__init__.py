"""Benchmarks: scripts that print tables, run from the repository root as modules,
``python -m benchmarks.NAME`` (they import ``tests.support`` for their independent references)."""
