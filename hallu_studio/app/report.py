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
from ..studies.in_force import InForce, configs_in_force
from ..studies.ranking import benchmark_boards, pivot_leaderboard
from ..metrics.evidence import OMITTED, verdict_group
from .columns import all_keys, column_of, headline_columns
from .inspection import inspect_response
from .render.leaderboard import (LEADERBOARD_CSS, PROBE_NOTE, board_html, headline_sentence, is_ranked,
                                 model_cell, ranked_first, waiting_html)
from ..presentation import number
from .render.palette import HALLUCINATED, UNCERTAIN, badge, esc
from .render.plots import figure_png, figures_html
from .render.tables import records_table_html

if TYPE_CHECKING:
    from ..model import SceneGraph
    from ..store import Store
    from ..studies.ranking import BenchmarkBoard

# Nothing may be fetched: images and plots are data URIs, styles are inline, scripts are absent.
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"

REPORT_CSS = """
body { font-family: sans-serif; margin: 18px auto; max-width: 1320px; padding: 0 16px; color: #222; }
h1 { font-size: 1.5em; margin: 0 0 4px 0; } h2 { font-size: 1.25em; margin: 22px 0 6px 0; }
.hs-meta { color: #555; font-size: 0.9em; margin: 0 0 12px 0; }
.hs-fail { display: grid; grid-template-columns: 280px minmax(0, 1fr); gap: 14px; border: 1px solid #e2e2e2;
  border-radius: 6px; padding: 10px; margin: 10px 0; }
.hs-fail > div.hs-graph { grid-column: 1 / -1; display: grid; grid-template-columns: minmax(0, 1fr) 340px; gap: 14px; }
.hs-summary { font-size: 1.08em; background: #f3f6fb; border-left: 4px solid #2e6bd6; padding: 6px 10px;
  margin: 6px 0 12px 0; }
.hs-fail > div { min-width: 0; }
.hs-fail img { max-width: 100%; height: auto; }
.hs-fail h4 { margin: 0 0 4px 0; font-size: 0.95em; }
.hs-fail .hs-why { color: #a33; font-size: 0.9em; margin: 0 0 4px 0; }
.hs-fail .hs-response { font-size: 0.92em; line-height: 1.55; }
.hs-claims { margin: 2px 0; padding-left: 16px; font-size: 0.85em; } .hs-claims li { margin: 2px 0; }
code { font-size: 0.9em; }
"""



def failure_columns() -> list[str]:
    """The failure measures, in the registry's order: each metric's per-response number (Browse's column) that grows
    with hallucination; a benchmark's worst failures are its highest on the first of these it has values in."""
    return [c.key for c in headline_columns() if c.higher_is_worse]


def scene_graph_png(graph: "SceneGraph", max_objects: int = 40) -> bytes | None:
    """A static drawing of a scene graph: every object (up to ``max_objects``) with all its attributes under its
    name, and the labelled relations; laid out as Inspect lays out its graphs (``render.layout``: no box over
    another or over an edge label)."""
    if not graph.objects:
        return None
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch

    from .render.layout import Box, Link, layout

    related = {e for r in graph.relations for e in (r.subject, r.object)}
    objects = sorted(graph.objects, key=lambda o: o.id not in related)[:max_objects]
    kept = {o.id for o in objects}
    names = [o.name for o in objects]

    def name(o: Any) -> str:  # a repeated name is told apart by its id ("dahlia2", or "dahlia 7")
        if names.count(o.name) == 1:
            return o.name
        return o.id if o.id.startswith(o.name) else f"{o.name} {o.id}"

    def wrapped(words: list[str], width: int = 26) -> str:
        lines, line = [], ""
        for w in words:
            piece = w if not line else f"{line} · {w}"
            if line and len(piece) > width:
                lines.append(line)
                line = w
            else:
                line = piece
        return "\n".join(lines + ([line] if line else []))

    boxes = [Box(o.id, name(o) + (f"\n{wrapped([str(a) for a in o.attributes])}" if o.attributes else ""))
             for o in objects]
    edges: dict[tuple[str, str], list[str]] = {}
    for r in graph.relations:
        if r.subject in kept and r.object in kept and r.subject != r.object:
            key = (r.subject, r.object) if (r.object, r.subject) not in edges else (r.object, r.subject)
            edges.setdefault(key, []).append(r.predicate if key == (r.subject, r.object) else f"{r.predicate} (←)")
    links = [Link(a, b, "\n".join(labels)) for (a, b), labels in edges.items()]
    pos = layout(boxes, links)
    sizes = {b.id: b.size for b in boxes}
    left = min(pos[k][0] - sizes[k][0] / 2 for k in pos)
    right = max(pos[k][0] + sizes[k][0] / 2 for k in pos)
    top = min(pos[k][1] - sizes[k][1] / 2 for k in pos)
    bottom = max(pos[k][1] + sizes[k][1] / 2 for k in pos)
    dpi, scale = 100, 0.62  # layout pixels -> image pixels: 18 px labels drawn at about 11 px
    width, height = (right - left) * scale + 20, (bottom - top) * scale + 20
    shrink = min(1.0, 1100 / width)  # the widest drawing the report shows at full size
    scale, width, height = scale * shrink, width * shrink, height * shrink
    fig = plt.figure(figsize=(width / dpi, height / dpi), dpi=dpi)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(left - 10 / scale, right + 10 / scale)
    ax.set_ylim(bottom + 10 / scale, top - 10 / scale)  # y grows downwards, as on screen
    ax.set_axis_off()
    points = 72 / dpi * scale
    def rim(frm: str, to: str) -> tuple[float, float]:
        """Where the line from ``frm``'s centre to ``to``'s leaves ``to``'s box (the arrowhead stays in view)."""
        (x0, y0), (x1, y1) = pos[frm], pos[to]
        w, h = sizes[to][0] / 2 + 4, sizes[to][1] / 2 + 4
        dx, dy = x0 - x1, y0 - y1
        t = min(w / abs(dx) if dx else float("inf"), h / abs(dy) if dy else float("inf"), 1.0)
        return x1 + dx * t, y1 + dy * t

    for (a, b), labels in edges.items():
        ax.add_patch(FancyArrowPatch(rim(b, a), rim(a, b), arrowstyle="-|>", mutation_scale=10, color="#8c9bb0",
                                     lw=1, shrinkA=0, shrinkB=0, zorder=1))
        mid = ((pos[a][0] + pos[b][0]) / 2, (pos[a][1] + pos[b][1]) / 2)
        ax.text(*mid, "\n".join(labels), fontsize=14 * points, color="#333", ha="center", va="center", zorder=3,
                bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none"})
    for box in boxes:
        ax.text(*pos[box.id], box.label, fontsize=18 * points, ha="center", va="center", zorder=2,
                linespacing=1.15, bbox={"boxstyle": "round,pad=0.35", "fc": "#eef3fa", "ec": "#8aa4c8"})
    return figure_png(fig, dpi=dpi)


def _png_img(data: bytes | None, alt: str) -> str:
    if not data:
        return ""
    return f'<img alt="{esc(alt)}" src="data:image/png;base64,{base64.b64encode(data).decode("ascii")}"/>'


def worst_failures(store: "Store", benchmark: str, in_force: InForce, limit: int = 6
                   ) -> tuple[str, list[dict[str, Any]]]:
    """The benchmark's worst responses (distinct samples) on the first failure measure it has, and that measure's
    column ("trihe.hallucinated"; "" when none has a failure)."""
    for column in failure_columns():
        rows = store.browse_responses({"benchmarks": [benchmark]}, all_keys(), configs=in_force.keys(),
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
            return column, picked[:limit]
    return "", []


def _judged_claims(store: "Store", row: dict[str, Any], column: str, in_force: InForce, limit: int = 8) -> str:
    """What the failure measure's metric judged not right in the response, as its spec's evidence rows say
    (``MetricSpec.evidence_rows``: hallucinated or wrong first, then what it could not settle); the evidence in full
    is in Inspect."""
    found = column_of(column)
    spec = found.spec if found is not None else None
    if spec is None or spec.evidence_rows is None:
        return ""
    score = next((s for s in store.get_scores(row["id"], spec.name) if s.config_key == in_force.key(spec.name)), None)
    response = store.get_response(row["id"])
    if score is None or response is None:
        return ""
    rows = spec.evidence_rows(score.values, score.evidence, response.text)
    judged = [r for r in rows if r.verdict != OMITTED and verdict_group(r.verdict) != "none"]
    bad = sorted((r for r in judged if verdict_group(r.verdict) in ("bad", "open")),
                 key=lambda r: verdict_group(r.verdict) != "bad")
    if not bad:
        return ""
    items = "".join(f'<li>{badge(HALLUCINATED if verdict_group(r.verdict) == "bad" else UNCERTAIN, r.verdict_words)} '
                    f'{esc(r.text)}</li>' for r in bad[:limit])
    more = f"<li>… and {len(bad) - limit} more</li>" if len(bad) > limit else ""
    return (f'<h4>{esc(spec.display_name)}: not supported ({len(bad)} of {len(judged)} judged)</h4>'
            f'<ul class="hs-claims">{items}{more}</ul>')


def _failure_html(store: "Store", row: dict[str, Any], column: str, in_force: InForce, names: dict[str, str]) -> str:
    found = column_of(column)
    column_name, value = (found.title if found else column), row.get(column)
    panels = inspect_response(store, row["id"], in_force, with_graphs=False)
    sample = store.get_sample(row["sample_id"])
    graph = _png_img(scene_graph_png(sample.scene_graph), "reference scene graph") if sample else ""
    return (f'<article class="hs-fail"><div>{panels.image}</div>'
            f'<div><h4>{model_cell(row["model"], bool(row["synthetic"]), names.get(row["run_id"]))}</h4>'
            f'<p class="hs-why">{esc(column_name)}: {esc(number(value))}</p>{panels.header}{panels.response_text}</div>'
            f'<div class="hs-graph"><div><h4>reference scene graph</h4>{graph or "<p>none stored</p>"}</div>'
            f'<div>{_judged_claims(store, row, column, in_force)}</div></div></article>')


# What the colours of a failure card mean (the app says it on hover; a shared file cannot).
FAILURE_LEGEND = ('<p class="hs-meta">In each response, the claims the Tri-HE judge checked are marked: '
                  f'{badge("supported", "green")} supported by the reference, {badge("hallucinated", "red")} '
                  f'hallucinated, {badge("uncertain", "yellow")} not stated by the reference (unverifiable) or a '
                  'guess; objects alone are marked by HalFscore the same way. Beside the reference scene graph, '
                  'what the failure measure\'s metric did not find supported, named for what it is about (object, '
                  'relation, attribute, count, answer).</p>')


def summary_line(boards: "list[BenchmarkBoard]") -> str:
    """Per benchmark, who hallucinates least on its ranking number, by how much, how sure, and what the number is in
    plain words (``render.leaderboard.headline_sentence``, the Overview's line above each board)."""
    parts = [sentence for board in boards if (sentence := headline_sentence(board))]
    if not parts:
        return "Nothing is ranked yet: no benchmark has a scored headline number."
    return "In short: " + " ".join(parts)


def split_numbers_html(store: "Store", benchmark: str, in_force: InForce) -> str:
    """The numbers metrics break down per split or subtask (POPE's ``f1`` per ``adversarial`` ...), one row per run;
    empty when none does here."""
    from ..metrics.registry import METRIC_NAMES, metric_spec
    from ..studies.leaderboard import leaderboard

    metrics = [m for m in METRIC_NAMES if metric_spec(m).breakdown is not None]
    rows = [r for r in leaderboard(store, benchmark, metrics=metrics, configs=in_force.keys()) if r.get("split")]
    if not rows:
        return ""
    return (f"<h3>Per split</h3><div class=\"hs-scroll\" style=\"overflow-x:auto;max-width:100%\">"
            f"{records_table_html(pivot_leaderboard(rows))}</div>")


def build_report(store: "Store", benchmark: str | None = None, failures: int = 6,
                 in_force: InForce | None = None) -> str:
    """The report as one HTML document (a string), of the configurations ``in_force`` (default: the default
    settings')."""
    in_force = in_force if in_force is not None else configs_in_force(store)
    counts = store.counts()
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    sections = []
    boards = ranked_first(benchmark_boards(store, in_force, benchmark))
    probes = any(r.synthetic for board in boards for r in board.runs)
    for board in (b for b in boards if is_ranked(b)):
        rows = store.browse_responses({"benchmarks": [board.benchmark]}, all_keys(), limit=1_000_000,
                                      configs=in_force.keys())
        column, worst = worst_failures(store, board.benchmark, in_force, failures)
        what = found.title if (found := column_of(column)) else ""
        names = {r.run_id: r.name for r in board.runs}
        cards = "".join(_failure_html(store, r, column, in_force, names) for r in worst) if worst else (
            "<p>no failures found (nothing scored, or nothing hallucinated)</p>")
        sections.append(f"{board_html(board, static=True)}{split_numbers_html(store, board.benchmark, in_force)}"
                        f"{figures_html(rows, names, {h.metric for h in board.headlines})}"
                        f"<h3>Worst failures, by {esc(what or 'failure measure')}</h3>{FAILURE_LEGEND}{cards}")
    app_css = (ASSETS_DIR / "app.css").read_text(encoding="utf-8") if (ASSETS_DIR / "app.css").exists() else ""
    body = ("".join(sections) + waiting_html([b for b in boards if not is_ranked(b)])) or \
        "<p>no runs in this store yet</p>"
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<title>HalluStudio report{esc(" · " + benchmark) if benchmark else ""}</title>'
            f"<style>{app_css}{LEADERBOARD_CSS}{REPORT_CSS}</style></head><body>"
            f"<h1>HalluStudio report{esc(' · ' + benchmark) if benchmark else ''}</h1>"
            f'<p class="hs-summary">{esc(summary_line(boards))}</p>'
            f"{'<p class=hs-probe>' + esc(PROBE_NOTE) + '</p>' if probes else ''}"
            f'<p class="hs-meta">{esc(now)} · store <code>{esc(Path(store.path).name)}</code> · '
            f'{counts["runs"]:,} runs, {counts["responses"]:,} responses, {counts["scores"]:,} scores. '
            f"Each benchmark's table says below it what each number means and where it misleads.</p>"
            f"{body}</body></html>")


def write_report(store: "Store", path: str | Path, benchmark: str | None = None,
                 in_force: InForce | None = None) -> Path:
    """Write the report to ``path`` (parents created); returns the path."""
    if benchmark and benchmark not in {b.name for b in store.benchmark_infos()}:
        known = ", ".join(b.name for b in store.benchmark_infos()) or "none"
        raise ValueError(f"no benchmark {benchmark!r} in the store (benchmarks: {known})")
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(build_report(store, benchmark, in_force=in_force), encoding="utf-8")
    return out
