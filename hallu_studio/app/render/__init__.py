"""Pure rendering functions: model objects in, an HTML string (or a matplotlib figure) out.

Nothing here touches Gradio or the store, so every renderer is unit-testable on
hand-made ``Score`` evidence. Every piece of untrusted text (responses, dataset
labels, judge reasons) goes through ``html.escape`` before it reaches HTML.
"""

from .diff import edit_diff_html
from .graphs import concept_graph_html, graph_iframe, scene_graph_html
from .heatmap import transport_heatmaps_html
from .image import image_html
from .tables import records_table_html
from .text import SpanMark, highlight_spans_html, response_spans
from .verdicts import halfscore_html, logit_lens_svg, reefknot_html, triplet_verdicts_html

__all__ = [
    "SpanMark", "concept_graph_html", "edit_diff_html", "graph_iframe", "halfscore_html", "highlight_spans_html",
    "image_html",
    "logit_lens_svg", "records_table_html", "reefknot_html", "response_spans", "scene_graph_html",
    "transport_heatmaps_html", "triplet_verdicts_html",
]
