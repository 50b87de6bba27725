"""Everything Inspect shows for one response, rendered from the store (no Gradio here).

``inspect_response(store, response_id, in_force)`` gathers the response, its sample, image,
scores (each metric's under its configuration in force, ``studies.in_force``) and the human events on it,
and returns the HTML of each panel. It names no metric: every registered metric's spec says what its evidence
judged (``evidence_rows``) and which drawing it asks for (``panel``, drawn by ``render.panels``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from ..annotation import current_corrections
from ..reference_scope import Scope
from ..judges.base import CAPTION_SOURCE
from ..metrics.evidence import CORRECT, NOT_SETTLED, WRONG, EvidenceRow
from ..metrics.registry import metric_specs
from ..metrics.spec import MetricSpec
from ..model import Score
from ..store import Store
from . import render
from .render.evidence import disagreements_html, metric_section_html
from .render.graphs import concept_verdicts
from .render.panels import PanelContext, draw_panel
from ..presentation import display_name, model_label, number, run_names
from ..studies.in_force import InForce, configs_in_force
from .columns import headline_columns
from .render.people import people_html, people_line
from ..studies.people_judges import in_force_beside
from .render.palette import HALLUCINATED, SUPPORTED, UNCERTAIN, claim_words, empty_note, esc

# The text's marks speak the graphs' three verdicts; a whole answer's "correct" / "wrong" are their green and red.
_SHOWN = {CORRECT: SUPPORTED, WRONG: HALLUCINATED, NOT_SETTLED: UNCERTAIN}
CONCEPTS = "concepts"  # the scoring pipeline's extracted concepts (no metric: what the metrics read)
# Panel kinds whose evidence the shared drawings read: the claim judge's (the text's and concept graph's colours,
# Annotate's claim corrections), the concept matcher's (objects no claim names), the reviser's (Annotate's edits).
CLAIMS, CONCEPT_MATCH, EDIT_DIFF = "claims", "concept_match", "edit_diff"
# Drawings Inspect sets beside the image and the graphs (``InspectPanels.drawings``), not inside their metric's section.
SIDE_BY_SIDE = ("transport_plan", EDIT_DIFF)


@dataclass
class MetricView:
    """One metric's score on the response under its configuration in force, and what its evidence judged."""

    spec: MetricSpec
    score: Score
    rows: list[EvidenceRow]


@dataclass
class InspectPanels:
    response_id: str
    header: str
    image: str
    reference_graph: str
    response_graph: str
    response_text: str
    drawings: dict[str, str]  # panel kind -> its drawing ("transport_plan", "edit_diff", ...), for metrics scored
    evidence: str  # every metric's section: its numbers, its drawing where Inspect does not place it, its rows
    disagreements: str  # where two metrics give one concept different verdicts, and why
    triplet_choices: list[str]
    edit_choices: list[str]
    people: str = ""  # people's labels beside the judges' verdicts (render.people)
    people_line: str = ""  # one line of it for under the header (Inspect only: Annotate's items leave it out)
    metrics: list[MetricView] = field(default_factory=list)


def _in_force(scores: list[Score], metric: str, in_force: InForce) -> Score | None:
    """The response's score of ``metric`` under its configuration in force (None: not scored under it)."""
    return next((s for s in scores if s.metric == metric and s.config_key == in_force.key(metric)), None)


def scores_line(scores: list[Score], in_force: InForce) -> str:
    """The response's per-response numbers (Browse's columns) under the configurations in force, one line, each with
    its unit (and the share a count is of, where the spec has one), and which configuration is shown where it is not
    the current settings'."""
    parts, notes = [], []
    for column in headline_columns():
        score = _in_force(scores, column.spec.name, in_force)
        if score is None:
            continue
        value = column.number.of(score.values)
        share = column.spec.agreement
        also = (f' <span class="hs-unit">= {esc(share.name)} {esc(number(share.of(score.values)))}</span>'
                if share is not None and share != column.number and share.of(score.values) is not None else "")
        parts.append(f'<span class="hs-score" data-column="{esc(column.key)}" title="{esc(column.number.meaning)}">'
                     f'{esc(column.spec.title(column.number))} <b>{esc(number(value))}</b> '
                     f'<span class="hs-unit">{esc(column.number.unit)}</span>{also}</span>')
        note = in_force.shown[column.spec.name].note
        if note:
            notes.append(note)
    if not parts:
        return ""
    extra = f'<br><span class="hs-config-note">{esc("; ".join(notes))}</span>' if notes else ""
    return f'<p class="hs-scores">{" · ".join(parts)}{extra}</p>'


def _header(store: Store, response_id: str, sample: Any, run: Any, scores: str) -> str:
    model = esc(model_label(run.model, run.synthetic) if run is not None else "unknown run")
    if run is not None:  # the run's name where it carries settings (another run of the model differs in them)
        name = run_names(store.run_manifests(run.benchmark)).get(run.id, "")
        model += f' · <span class="hs-run-name">{esc(name)}</span>' if name != display_name(run.model) else ""
    question = f"<p><b>question:</b> {esc(sample.question)}</p>" if sample.question else ""
    options = f"<p><b>options:</b> {esc(' / '.join(sample.options))}</p>" if sample.options else ""
    answer = f"<p><b>gold answer:</b> {esc(sample.answer)}</p>" if sample.answer else ""
    # What the references settle (short captions, a dense description, an object list): what the verdicts read.
    reference = f'<p class="hs-reference">{esc(Scope.of_sample(sample).summary())}</p>'
    return (f'<div class="hs-header"><p><b>{model}</b> on <code>{esc(sample.id)}</code> · benchmark '
            f'{esc(sample.benchmark)} · task {esc(sample.task)} · domain {esc(sample.domain)} · '
            f'<code class="hs-response-id">{esc(response_id)}</code></p>{question}{options}{answer}{reference}'
            f'{scores}</div>')


def metric_views(scores: list[Score], text: str, in_force: InForce) -> list[MetricView]:
    """Every registered metric scored on the response under its configuration in force, in the registry's order,
    with its evidence rows (none where its spec has no reader)."""
    views = []
    for spec in metric_specs():
        score = _in_force(scores, spec.name, in_force)
        if score is None:
            continue
        rows = spec.evidence_rows(score.values, score.evidence or {}, text) if spec.evidence_rows else []
        views.append(MetricView(spec, score, list(rows)))
    return views


def _configurations(scores: list[Score], view: MetricView, in_force: InForce) -> list[tuple[str, Mapping[str, Any]]]:
    """Every configuration's evidence of the view's metric, the one in force first, each labelled (a claim judge that
    read a dense caption rather than a scene graph says so)."""
    name = view.spec.name
    mine = sorted((s for s in scores if s.metric == name), key=lambda s: s is not view.score)
    return [(f"{s.evidence.get('judge') or s.evidence.get('model') or '?'} ({in_force.label(name, s.config_key)})"
             + (" vs the reference caption" if s.evidence.get("reference") == CAPTION_SOURCE else ""), s.evidence)
            for s in mine]


def _read_against(score: Score) -> str:
    """What the score's evidence says it was read against (a judge's reference, an open reference's reading), and why
    it is undefined, where it is."""
    evidence = score.evidence or {}
    parts = [f"judged against the {evidence['reference']}" if evidence.get("reference") else "",
             f"reference read as {evidence['scope']}" if evidence.get("scope") else "", score.undefined_reason or ""]
    return "; ".join(p for p in parts if p)


def _choices(by_panel: Mapping[str, Score]) -> tuple[list[str], list[str]]:
    """Annotate's lists: the claims people may correct, the edits they may review (numbered as stored)."""
    claims = by_panel.get(CLAIMS)
    triplets = ((claims.evidence if claims else None) or {}).get("triplets") or []
    triplet_choices = [f"{i}: {' | '.join(str(x) for x in t.get('triplet') or [])} "
                       f"[{claim_words(str(t.get('verdict')), str(t.get('kind') or ''))}]"
                       for i, t in enumerate(triplets)]
    edit = by_panel.get(EDIT_DIFF)
    alignment = ((edit.evidence if edit else None) or {}).get("alignment") or []
    # Edits are numbered among the alignment's non-equal steps (the "edit:<i>" of a revision review).
    edits = [step for step in alignment if step[0] != "equal"]
    edit_choices = [f"{i}: {op} {' '.join(map(str, old or []))} → {' '.join(map(str, new or []))}"
                    for i, (op, old, new) in enumerate(edits)]
    return triplet_choices, edit_choices


def _graphs(sample: Any, concepts: dict[str, Any], claims: Mapping[str, Any] | None,
            matched: Mapping[str, Any] | None, text: str) -> tuple[str, str]:
    ref_graph = render.graph_iframe(render.scene_graph_html(sample.scene_graph) if sample.scene_graph.objects
                                    else None, title="reference scene graph",
                                    empty="no reference scene graph; " + Scope.of_sample(sample).summary())
    triplets = (claims or {}).get("triplets") or []
    said = any(concepts.get(k) for k in ("objects", "attributes", "relations", "counts"))
    resp_graph = render.graph_iframe(
        render.concept_graph_html(concepts, dict(claims) if claims else None, dict(matched) if matched else None,
                                  text=text) if said or triplets else None, title="response concept graph",
        empty="the response names no object, attribute or relation (a short answer is judged whole: see its metrics)")
    return ref_graph, resp_graph


def inspect_response(store: Store, response_id: str, in_force: InForce | None = None, *,
                     with_graphs: bool = True) -> InspectPanels:
    """All Inspect panels for one response, each metric's from its score under its configuration in force
    (``in_force``; default: the default settings'); a clear error names a response that is not there."""
    response = store.get_response(response_id)
    if response is None:
        raise KeyError(f"response {response_id!r} is not in the store")
    sample = store.get_sample(response.sample_id)
    if sample is None:
        raise KeyError(f"response {response_id!r} names sample {response.sample_id!r}, which is not in the store")
    run = store.get_run(response.run_id)
    scores = store.get_scores(response_id)
    events = store.list_events(response_id=response_id)
    in_force = in_force if in_force is not None else configs_in_force(store)

    image = store.get_image(sample.image_sha256) if sample.image_sha256 else None
    image_html = render.image_html(image[0] if image else None, image[1] if image else None, alt=sample.image_key,
                                   missing_reason=None if sample.image_sha256 else f"{sample.image_key} was not found")
    views = metric_views(scores, response.text, in_force)
    by_panel = {v.spec.panel: v.score for v in views if v.spec.panel}
    concepts_score = _in_force(scores, CONCEPTS, in_force)
    concepts = (concepts_score.evidence.get("concepts") if concepts_score else None) or {}
    claims = by_panel[CLAIMS].evidence if CLAIMS in by_panel else None
    matched = by_panel[CONCEPT_MATCH].evidence if CONCEPT_MATCH in by_panel else None
    # The text takes its objects' colours from the concept graph's verdicts: one concept, one colour.
    objects, _ = concept_verdicts(concepts, dict(claims) if claims else None, dict(matched) if matched else None)
    marks = render.response_spans(concepts, dict(claims) if claims else None,
                                  object_verdicts={k.lower(): v for k, v in objects.items()})
    # A short answer judged whole (yes / no, an option) takes its verdict's colour, as its metric's row says.
    marks += [render.SpanMark(r.span[0], r.span[1], r.kind or "answer", r.text, _SHOWN.get(r.verdict, r.verdict),
                              r.verdict_words) for v in views if not v.spec.flags_words for r in v.rows if r.span]
    corrections = {index: v["verdict"] for (rid, _ann, index), v in current_corrections(events).items()}

    drawings, sections = {}, []
    for view in views:
        ctx = PanelContext(response.signals or {}, corrections if view.spec.panel == CLAIMS else {},
                           _configurations(scores, view, in_force))
        drawing = draw_panel(view.spec.panel, view.score.values, view.score.evidence or {}, ctx)
        if view.spec.panel and drawing:
            drawings[view.spec.panel] = drawing
        placed = view.spec.panel in SIDE_BY_SIDE
        sections.append(metric_section_html(view.spec, view.score.values, view.rows, "" if placed else drawing,
                                            note=_read_against(view.score)))
    triplet_choices, edit_choices = _choices(by_panel)
    ref_graph, resp_graph = _graphs(sample, concepts, claims, matched, response.text) if with_graphs else ("", "")
    # People beside the judges: imported labels, ratings and corrections against each metric's verdict.
    beside = in_force_beside(events, response.text, scores, in_force)
    return InspectPanels(
        response_id=response_id,
        header=_header(store, response_id, sample, run, scores_line(scores, in_force)),
        image=image_html, reference_graph=ref_graph, response_graph=resp_graph,
        response_text=render.highlight_spans_html(response.text, marks),
        drawings=drawings,
        evidence="".join(sections) or empty_note("no metric has scored this response yet"),
        disagreements=disagreements_html([(v.spec, v.rows) for v in views]),
        triplet_choices=triplet_choices, edit_choices=edit_choices, metrics=views,
        people=people_html(beside, response.text), people_line=people_line(beside))


BLIND_NOTE = "blind: no model name, verdict or score is shown"


@dataclass
class AnnotationItem:
    """What Annotate shows of one response. Blind: the image, the question and the plain response, and
    nothing of the model, the judges or the scores."""

    response_id: str
    header: str
    image: str
    response_text: str
    verdicts: str  # "" when blind
    triplet_choices: list[str]
    edit_choices: list[str]


def annotation_item(store: Store, response_id: str, *, blind: bool = True,
                    in_force: InForce | None = None) -> AnnotationItem:
    """The item as an annotator sees it. ``blind`` (the default for ratings) leaves out the model's name, the
    verdict colours in the text, the judged triplets, the edit diff and every score; not blind, the scores are
    those ``in_force`` (``inspect_response``)."""
    if not blind:
        p = inspect_response(store, response_id, in_force, with_graphs=False)
        return AnnotationItem(response_id, p.header, p.image, p.response_text, p.disagreements + p.evidence,
                              p.triplet_choices, p.edit_choices)
    response = store.get_response(response_id)
    if response is None:
        raise KeyError(f"response {response_id!r} is not in the store")
    sample = store.get_sample(response.sample_id)
    if sample is None:
        raise KeyError(f"response {response_id!r} names sample {response.sample_id!r}, which is not in the store")
    image = store.get_image(sample.image_sha256) if sample.image_sha256 else None
    image_html = render.image_html(image[0] if image else None, image[1] if image else None, alt="the image",
                                   missing_reason=None if sample.image_sha256 else "the image was not found")
    question = f"<p><b>question:</b> {esc(sample.question)}</p>" if sample.question else ""
    options = f"<p><b>options:</b> {esc(' / '.join(sample.options))}</p>" if sample.options else ""
    header = (f'<div class="hs-header hs-blind"><p>task {esc(sample.task)} · '
              f'<code class="hs-response-id">{esc(response_id)}</code> · {esc(BLIND_NOTE)}</p>{question}{options}'
              f'</div><p><b>response:</b></p>')
    return AnnotationItem(response_id, header, image_html, render.highlight_spans_html(response.text, []), "",
                          [], [])
