"""Metrics: pure functions of data (no store, no UI). One metric per module.

Each metric follows the update / compute split of torchmetrics: ``update`` turns
one item into per-item sufficient statistics (plus the evidence the app shows), and
``compute`` aggregates a list of those statistics. Micro-averages and bootstrap
confidence intervals (``metrics.aggregate``) then come for free.
"""
