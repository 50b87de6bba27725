"""The per-response metric columns Browse shows, read from each metric's spec (``MetricSpec.item``)."""

from __future__ import annotations

from dataclasses import dataclass

from ..metrics.spec import MetricSpec, Number


@dataclass(frozen=True)
class MetricColumn:
    """One metric's per-response number as a column: ``key`` as the store's browse query names it."""

    spec: MetricSpec
    number: Number

    @property
    def key(self) -> str:
        return self.spec.column(self.number)

    @property
    def title(self) -> str:
        """The heading, named and pointed as the Overview names its numbers: "VISCON EMD ↓ (×100)"."""
        return f"{self.spec.title(self.number)} {self.number.arrow} ({self.number.unit})"

    @property
    def higher_is_worse(self) -> bool:
        return self.number.lower_is_better


def headline_columns() -> tuple[MetricColumn, ...]:
    """Browse's metric columns in the registry's order: every metric whose spec has a per-response value."""
    from ..metrics.registry import metric_specs

    return tuple(MetricColumn(spec, spec.item) for spec in metric_specs() if spec.item is not None)


def column_of(key: str) -> MetricColumn | None:
    """The column named ``"metric.key"``, None for another key."""
    return next((c for c in headline_columns() if c.key == key), None)


def default_sort() -> str:
    """Browse's first order: the first column in the registry's (the Overview's ranking) order, the claim-level
    count of hallucinations, so that Browse opens on real failures (a distance such as EMD's ranks short correct
    answers high, since a one-word answer leaves the whole scene unmatched)."""
    return headline_columns()[0].key


def metric_of(key: str) -> str:
    """The metric a column belongs to.

    >>> metric_of("emd.total")
    'emd'
    """
    return key.split(".", 1)[0]


def headline_keys() -> list[str]:
    return [c.key for c in headline_columns()]


def all_keys() -> list[str]:
    """Browse's columns and the values the metrics' plots read (``MetricSpec.plots``): what the Overview and the
    report read per response."""
    from ..metrics.registry import metric_specs

    plotted = [f"{spec.name}.{key}" for spec in metric_specs()
               for plot in spec.plots for key in plot.reads]
    return list(dict.fromkeys([*headline_keys(), *plotted]))
