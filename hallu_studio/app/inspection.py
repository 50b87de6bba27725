"""Everything Inspect shows for one response, rendered from the store (no Gradio here).

``inspect_response(store, response_id, in_force)`` gathers the response, its sample, image,
scores (each metric's under its configuration in force, ``studies.in_force``) and the human events on it,
and returns the HTML of each panel.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..annotation import current_corrections
from ..reference_scope import Scope
from ..judges.base import CAPTION_SOURCE
from ..model import Score
from ..store import Store
from . import render
from .render.concepts import object_names
from ..presentation import display_name, model_label, number, run_names
from ..studies.in_force import InForce, configs_in_force
from .columns import headline_columns
from .render.palette import claim_label, empty_note, esc
from .render.people import people_html, people_line
from ..studies.people_judges import in_force_beside


@dataclass
class InspectPanels:
    response_id: str
    header: str
    image: str
    reference_graph: str
    response_graph: str
    response_text: str
    emd: str
    edit: str
    triplets: str
    halfscore: str
    reefknot: str
    triplet_choices: list[str]
    edit_choices: list[str]
    people: str = ""  # people's labels beside the judges' verdicts (render.people)
    people_line: str = ""  # one line of it for under the header (Inspect only: Annotate's items leave it out)


def _in_force(scores: list[Score], metric: str, in_force: InForce) -> Score | None:
    """The response's score of ``metric`` under its configuration in force (None: not scored under it)."""
    return next((s for s in scores if s.metric == metric and s.config_key == in_force.key(metric)), None)


def scores_line(scores: list[Score], in_force: InForce) -> str:
    """The response's per-response numbers (Browse's columns) under the configurations in force, one line, and which
    configuration is shown where it is not the current settings'."""
    parts, notes = [], []
    for column in headline_columns():
        score = _in_force(scores, column.spec.name, in_force)
        if score is None:
            continue
        value = column.number.of(score.values)
        parts.append(f'<span class="hs-score" data-column="{esc(column.key)}" title="{esc(column.number.meaning)}">'
                     f'{esc(column.title)} <b>{esc(number(value))}</b></span>')
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

    concepts_score, trihe = _in_force(scores, "concepts", in_force), _in_force(scores, "trihe", in_force)
    halfscore, emd, edit, reef = (_in_force(scores, m, in_force) for m in ("halfscore", "emd", "edit", "reefknot"))
    # Every Tri-HE configuration's verdicts side by side (two judges, say), the one in force first.
    trihe_scores = sorted((s for s in scores if s.metric == "trihe"), key=lambda s: s is not trihe)
    concepts = (concepts_score.evidence.get("concepts") if concepts_score else None) or {}
    trihe_ev = trihe.evidence if trihe else None
    hallucinated = object_names(halfscore.evidence.get("hallucinated") or []) if halfscore else set()
    supported = object_names(m[0] for m in halfscore.evidence.get("matched") or [] if m) if halfscore else set()
    marks = render.response_spans(concepts, trihe_ev, hallucinated, supported)

    corrections = {index: v["verdict"] for (rid, _ann, index), v in current_corrections(events).items()}
    # A DCI sample's claims were judged against its dense caption's concepts, not a scene graph: the label says so.
    judges = [(f"{s.evidence.get('judge', '?')} ({in_force.label('trihe', s.config_key)})"
               + (" vs the reference caption" if s.evidence.get("reference") == CAPTION_SOURCE else ""),
               s.evidence) for s in trihe_scores]
    triplets = (trihe_ev or {}).get("triplets") or []
    triplet_choices = [f"{i}: {' | '.join(str(x) for x in t.get('triplet') or [])} "
                       f"[{claim_label(str(t.get('verdict')), str(t.get('kind') or ''))}]"
                       for i, t in enumerate(triplets)]
    alignment = (edit.evidence.get("alignment") or []) if edit else []
    # Edits are numbered among the alignment's non-equal steps (the "edit:<i>" of a revision review).
    edits = [step for step in alignment if step[0] != "equal"]
    edit_choices = [f"{i}: {op} {' '.join(map(str, old or []))} → {' '.join(map(str, new or []))}"
                    for i, (op, old, new) in enumerate(edits)]

    if with_graphs:
        ref_graph = render.graph_iframe(render.scene_graph_html(sample.scene_graph) if sample.scene_graph.objects
                                        else None, title="reference scene graph",
                                        empty="no reference scene graph; " + Scope.of_sample(sample).summary())
        resp_graph = render.graph_iframe(
            render.concept_graph_html(concepts, trihe_ev, halfscore.evidence if halfscore else None)
            if concepts or triplets else None, title="response concept graph",
            empty="no concepts extracted from this response")
    else:
        ref_graph = resp_graph = ""
    # People beside the judges: imported labels, ratings and corrections against each metric's verdict.
    beside = in_force_beside(events, response.text, scores, in_force)
    return InspectPanels(
        response_id=response_id,
        header=_header(store, response_id, sample, run, scores_line(scores, in_force)),
        image=image_html,
        reference_graph=ref_graph,
        response_graph=resp_graph,
        response_text=render.highlight_spans_html(response.text, marks),
        emd=render.transport_heatmaps_html(emd.evidence, emd.values) if emd else empty_note("no EMD score"),
        edit=render.edit_diff_html(edit.evidence, edit.values) if edit else empty_note("no Evaluate-by-Edit score"),
        triplets=render.triplet_verdicts_html(judges, corrections),
        halfscore=render.halfscore_html(halfscore.evidence, halfscore.values) if halfscore else empty_note(
            "no HalFscore"),
        reefknot=render.reefknot_html(reef.values, reef.evidence, response.signals) if reef else empty_note(
            "not a Reefknot item"),
        triplet_choices=triplet_choices,
        edit_choices=edit_choices,
        people=people_html(beside, response.text),
        people_line=people_line(beside),
    )


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
        return AnnotationItem(response_id, p.header, p.image, p.response_text, p.triplets + p.edit,
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
