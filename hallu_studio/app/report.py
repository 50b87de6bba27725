"""The shareable report: one self-contained offline HTML file of what the Overview shows.

Per benchmark: the ranked leaderboard, the papers' plots, and the worst failures with their
image, scene graph, highlighted response and judged triplets. Everything is inline (CSS, plots
and images as data URIs); the page's Content-Security-Policy forbids any request, so opening
it fetches nothing even if a value slipped through. Every stored text is escaped.
"""

from __future__ import annotations

import base64
import datetime as _dt
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import ASSETS_DIR
from .columns import all_keys
from .inspection import inspect_response
from .overview_data import GUIDE, benchmark_boards
from .render.leaderboard import LEADERBOARD_CSS, board_html, model_cell
from .render.palette import TRIHE_TO_VERDICT, UNCERTAIN, badge, esc
from .render.plots import figure_png, figures_html

if TYPE_CHECKING:
    from ..model import SceneGraph
    from ..store import Store

# Nothing may be fetched: images and plots are data URIs, styles are inline, scripts are absent.
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"

REPORT_CSS = """
body { font-family: sans-serif; margin: 18px auto; max-width: 1320px; padding: 0 16px; color: #222; }
h1 { font-size: 1.5em; margin: 0 0 4px 0; } h2 { font-size: 1.25em; margin: 22px 0 6px 0; }
.hs-meta { color: #555; font-size: 0.9em; margin: 0 0 12px 0; }
.hs-fail { display: grid; grid-template-columns: 280px minmax(0, 1fr) 340px; gap: 14px; border: 1px solid #e2e2e2;
  border-radius: 6px; padding: 10px; margin: 10px 0; }
.hs-fail > div { min-width: 0; }
.hs-fail img { max-width: 100%; height: auto; }
.hs-fail h4 { margin: 0 0 4px 0; font-size: 0.95em; }
.hs-fail .hs-why { color: #a33; font-size: 0.9em; margin: 0 0 4px 0; }
.hs-fail .hs-response { font-size: 0.92em; line-height: 1.55; }
.hs-claims { margin: 2px 0; padding-left: 16px; font-size: 0.85em; } .hs-claims li { margin: 2px 0; }
code { font-size: 0.9em; }
"""

# The failure order: the first of these columns a benchmark has values in (worst = highest).
_FAILURE_ORDER = (("trihe.hallucinated", "hallucinated Tri-HE claims"), ("emd.total", "EMD ×100"),
                  ("reefknot.hallucinated", "Reefknot: hallucinated answer"), ("chair.chair_i_item", "CHAIRi"))


def scene_graph_png(graph: "SceneGraph", max_objects: int = 10) -> bytes | None:
    """A small static drawing of a scene graph (objects, attributes in brackets, labelled relations)."""
    if not graph.objects:
        return None
    import matplotlib.pyplot as plt
    import networkx as nx

    related = {e for r in graph.relations for e in (r.subject, r.object)}
    objects = sorted(graph.objects, key=lambda o: o.id not in related)[:max_objects]
    kept = {o.id for o in objects}
    names = [o.name for o in objects]

    def name(o: Any) -> str:  # a repeated name is told apart by its id ("dahlia2", or "dahlia 7")
        if names.count(o.name) == 1:
            return o.name
        return o.id if o.id.startswith(o.name) else f"{o.name} {o.id}"

    label = {o.id: name(o) + (f"\n[{o.attributes[0]}]" if o.attributes else "") for o in objects}
    g = nx.DiGraph()
    g.add_nodes_from(kept)
    edges = {(r.subject, r.object): r.predicate for r in graph.relations if r.subject in kept and r.object in kept
             and r.subject != r.object}
    g.add_edges_from(edges)
    pos = nx.circular_layout(g)  # at most max_objects nodes on a circle: labels never sit on each other
    fig, ax = plt.subplots(figsize=(4.4, 3.6))
    nx.draw_networkx_edges(g, pos, ax=ax, edge_color="#999", arrows=True, arrowsize=8, node_size=900)
    nx.draw_networkx_edge_labels(g, pos, edge_labels=edges, ax=ax, font_size=6, font_color="#444",
                                 bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.8})
    nx.draw_networkx_labels(g, pos, labels=label, ax=ax, font_size=6.5,
                            bbox={"boxstyle": "round,pad=0.25", "fc": "#eef3fa", "ec": "#8aa4c8"})
    ax.set_axis_off()
    ax.margins(0.22)
    return figure_png(fig, dpi=110)


def _png_img(data: bytes | None, alt: str) -> str:
    if not data:
        return ""
    return f'<img alt="{esc(alt)}" src="data:image/png;base64,{base64.b64encode(data).decode("ascii")}"/>'


def worst_failures(store: "Store", benchmark: str, limit: int = 6) -> tuple[str, list[dict[str, Any]]]:
    """The benchmark's worst responses (distinct samples) on the first failure measure it has, and its name."""
    for column, what in _FAILURE_ORDER:
        rows = store.browse_responses({"benchmarks": [benchmark]}, all_keys(),
                                      sort=column, descending=True, limit=limit * 40)
        rows = [r for r in rows if r.get(column) is not None and r[column] > 0]
        if rows:
            # Different scenes (not one image in five styles) and at most two per model, while there are others.
            picked, scenes, per_model = [], set(), Counter()
            for r in rows:
                sample = store.get_sample(r["sample_id"])
                scene = tuple(sorted(sample.scene_graph.triplets())) if sample and sample.scene_graph.objects \
                    else r["sample_id"]
                if scene in scenes or per_model[r["model"]] >= 2:
                    continue
                scenes.add(scene)
                per_model[r["model"]] += 1
                picked.append(r)
            return what, picked[:limit]
    return "", []


def _judged_claims(store: "Store", response_id: str, limit: int = 8) -> str:
    """The response's claims the Tri-HE judge did not support (the evidence in full is in the app's Inspect)."""
    scores = store.get_scores(response_id, "trihe")
    triplets = (scores[-1].evidence.get("triplets") or []) if scores else []
    bad = [t for t in triplets if t.get("verdict") != "supported"]
    if not bad:
        return ""
    items = "".join(f'<li>{badge(TRIHE_TO_VERDICT.get(str(t.get("verdict")), UNCERTAIN), str(t.get("verdict")))} '
                    f'{esc(" — ".join(str(x) for x in t.get("triplet") or []))}</li>' for t in bad[:limit])
    more = f"<li>… and {len(bad) - limit} more</li>" if len(bad) > limit else ""
    return (f'<h4>claims not supported ({len(bad)} of {len(triplets)})</h4>'
            f'<ul class="hs-claims">{items}{more}</ul>')


def _failure_html(store: "Store", row: dict[str, Any], column_name: str, value: Any) -> str:
    panels = inspect_response(store, row["id"], with_graphs=False)
    sample = store.get_sample(row["sample_id"])
    graph = _png_img(scene_graph_png(sample.scene_graph), "reference scene graph") if sample else ""
    number = f"{value:.3g}" if isinstance(value, float) else str(value)
    return (f'<article class="hs-fail"><div>{panels.image}</div>'
            f'<div><h4>{model_cell(row["model"], bool(row["synthetic"]))}</h4>'
            f'<p class="hs-why">{esc(column_name)}: {esc(number)}</p>{panels.header}{panels.response_text}</div>'
            f'<div><h4>reference scene graph</h4>{graph or "<p>none stored</p>"}'
            f'{_judged_claims(store, row["id"])}</div></article>')


def build_report(store: "Store", benchmark: str | None = None, failures: int = 6) -> str:
    """The report as one HTML document (a string)."""
    counts = store.counts()
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    sections = []
    for board in benchmark_boards(store, benchmark):
        rows = store.browse_responses({"benchmarks": [board.benchmark]}, all_keys(), limit=1_000_000)
        what, worst = worst_failures(store, board.benchmark, failures)
        column = next((c for c, w in _FAILURE_ORDER if w == what), None)
        cards = "".join(_failure_html(store, r, what, r.get(column)) for r in worst) if worst else (
            "<p>no failures found (nothing scored, or nothing hallucinated)</p>")
        sections.append(f"{board_html(board)}{figures_html(rows)}"
                        f"<h3>Worst failures, by {esc(what or 'failure measure')}</h3>{cards}")
    app_css = (ASSETS_DIR / "app.css").read_text(encoding="utf-8") if (ASSETS_DIR / "app.css").exists() else ""
    body = "".join(sections) or "<p>no runs in this store yet</p>"
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<title>HalluStudio report{esc(" · " + benchmark) if benchmark else ""}</title>'
            f"<style>{app_css}{LEADERBOARD_CSS}{REPORT_CSS}</style></head><body>"
            f"<h1>HalluStudio report{esc(' · ' + benchmark) if benchmark else ''}</h1>"
            f'<p class="hs-meta">{esc(now)} · store <code>{esc(Path(store.path).name)}</code> · '
            f'{counts["runs"]:,} runs, {counts["responses"]:,} responses, {counts["scores"]:,} scores. Runs marked '
            f"synthetic are probe models, not real LVLMs. What each metric means and where it misleads: "
            f"<code>{esc(GUIDE)}</code>.</p>{body}</body></html>")


def write_report(store: "Store", path: str | Path, benchmark: str | None = None) -> Path:
    """Write the report to ``path`` (parents created); returns the path."""
    if benchmark and benchmark not in {b.name for b in store.benchmark_infos()}:
        known = ", ".join(b.name for b in store.benchmark_infos()) or "none"
        raise ValueError(f"no benchmark {benchmark!r} in the store (benchmarks: {known})")
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(build_report(store, benchmark), encoding="utf-8")
    return out
