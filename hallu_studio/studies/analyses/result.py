"""What every analysis returns: a table, a figure and notes, with no UI in them.

The CLI prints ``rows`` and saves ``figure``; the app's Study view shows both.
Figures are ``matplotlib.figure.Figure`` objects on their own Agg canvas: no pyplot,
so nothing global to close and no display needed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ...presentation import number


@dataclass
class AnalysisResult:
    name: str  # the registry name, e.g. "frequent-pairs"
    title: str
    columns: list[str]
    rows: list[dict[str, Any]]
    figure: Figure
    notes: list[str] = field(default_factory=list)

    def table_text(self, digits: int = 3) -> str:
        """The table as aligned plain text (what ``hallu-studio study --analysis`` prints)."""
        cells = [[format_cell(r.get(c), digits) for c in self.columns] for r in self.rows]
        widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(self.columns)]
        lines = ["  ".join(c.ljust(w) for c, w in zip(self.columns, widths)).rstrip()]
        lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in cells]
        return "\n".join(lines)


def format_cell(value: Any, digits: int = 3) -> str:
    """A table cell as ``presentation.number`` writes numbers (``digits`` significant digits)."""
    return number(value, digits) if value is None or isinstance(value, (bool, int, float)) else str(value)


def figure(ncols: int = 1, width: float = 4.2, height: float = 3.4) -> tuple[Figure, list[Any]]:
    """A figure with ``ncols`` side-by-side axes (a Figure, not pyplot: nothing global to close)."""
    fig = Figure(figsize=(width * ncols, height))
    FigureCanvasAgg(fig)
    axes = [fig.add_subplot(1, ncols, i + 1) for i in range(ncols)]
    return fig, axes


def message_figure(text: str) -> Figure:
    """A figure that only says why there is nothing to plot."""
    fig, (ax,) = figure(1, 5.0, 2.0)
    ax.text(0.5, 0.5, text, ha="center", va="center", wrap=True, color="#666")
    ax.set_axis_off()
    return fig


def empty_result(name: str, title: str, columns: list[str], reason: str,
                 notes: list[str] | None = None) -> AnalysisResult:
    """No rows: the reason goes in the notes and on the figure."""
    return AnalysisResult(name, title, columns, [], message_figure(reason), [*(notes or []), reason])
