"""Pipelines: connect the library layers to the store (import, run, score)."""
