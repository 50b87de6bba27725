"""The annotation service: how people rate, correct and compare responses.

Every call appends one ``HumanEvent`` (the store never updates or deletes one);
the current value of anything is derived from the event log by the pure
functions below, which the app, the studies and the exporters share.

Targets of events:

- rating: the response itself, value an integer 1-5 (``RATING_GUIDELINE``);
- correction: ``"triplet:<i>"``, value ``{"verdict", "reason", "triplet"}``;
- revision_review: ``"edit:<i>"``, value ``{"accept": bool}``;
- note: ``""`` or any target, value ``{"text": str}``;
- preference: ``"vs:<response_b>:<aspect>"`` on response A, value ``{"a", "b", "winner", "aspect"}``;
- undo: names the undone event in ``undoes``;
- label, span_label, fact_label, comparison: judgements imported from outside studies
  (``model.check_judgement_value`` gives their shapes; ``importers.human`` reads them).

>>> events = [HumanEvent("ann", "rating", "r1", 2, id=1), HumanEvent("ann", "rating", "r1", 4, id=2),
...           HumanEvent("ann", "undo", "r1", None, undoes=2, id=3)]
>>> current_ratings(events)
{('r1', 'ann'): 2}
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from ..model import APP_SOURCE, HumanEvent, ValidationError, undone_event_ids
from .queue_order import mixed_order, unrated_order

if TYPE_CHECKING:
    from ..store import Store
    from .design import DrawnSample, StudyDesign

# Tri-HE's five-point human scale (Table 8 of Wu et al., paraphrased). Higher is better:
# 5 means no hallucination at all.
RATING_GUIDELINE: dict[int, str] = {
    1: "The response is entirely hallucinated and unrelated to the image and the question, "
       "or it is very hard to understand.",
    2: "Most of the response is hallucinated; only a few sentences (one or two) relate to the image "
       "and the question.",
    3: "About half of the sentences in the response are hallucinated.",
    4: "Most sentences in the response are free of hallucination.",
    5: "The response contains no hallucination.",
}
# Tri-HE Appendix C: two kinds of inference also count as hallucination.
RATING_NOTES: tuple[str, ...] = (
    "Unreasonable inferences (ones that violate commonsense knowledge) count as hallucination.",
    "Inferences that may be true but cannot be drawn from the image count as hallucination.",
)

# What a person can say about one extracted triplet; the Tri-HE judges use the same labels.
CORRECTION_VERDICTS: tuple[str, ...] = ("supported", "object", "relation", "prediction_error")
PREFERENCE_ASPECTS: tuple[str, ...] = ("overall", "precision", "recall")
QUEUE_MODES: tuple[str, ...] = ("unrated", "disagreement", "uncorrected")
# How a judgement was made, recorded in ``HumanEvent.meta["mode"]``: "blind" (no verdict, score or model
# name on screen), "unblinded" (the judges' verdicts shown: corrections, or a study that shows them), "api"
# (a script through the app's API, which shows what the caller chose).
ANNOTATION_MODES: tuple[str, ...] = ("blind", "unblinded", "api")


@dataclass(frozen=True)
class Preference:
    """One annotator's current choice between two responses on one aspect."""

    annotator: str
    a: str
    b: str
    winner: str  # a response id, or "tie"
    aspect: str = "overall"


# --------------------------------------------------------------------------- writing


def _name(annotator: str) -> str:
    name = str(annotator).strip()
    if not name:
        raise ValidationError("an annotator name is required")
    return name


def _meta(mode: str | None, study: str | None) -> dict[str, Any]:
    """What ``HumanEvent.meta`` records of how a judgement was made (nothing when the caller says nothing)."""
    if mode is not None and mode not in ANNOTATION_MODES:
        raise ValidationError(f"annotation mode must be one of {ANNOTATION_MODES}, got {mode!r}")
    return {k: v for k, v in (("mode", mode), ("study", study or None)) if v is not None}


def rate(store: "Store", annotator: str, response_id: str, value: int, *, mode: str | None = None,
         study: str | None = None) -> int:
    """Rate a response 1-5 (see ``RATING_GUIDELINE``); returns the event id.

    ``mode`` ("blind", "unblinded", "api") and ``study`` (its name) are recorded in the event's
    ``meta``: a study's ratings are those made in it.
    """
    if study:
        design = study_design(store, study)
        check_study_annotator(design, _name(annotator))
        if response_id not in ((store.get_study(study) or {}).get("items") or []):
            raise ValidationError(f"response {response_id!r} is not an item of study {study!r}")
    return store.append_event(HumanEvent(_name(annotator), "rating", response_id, value, meta=_meta(mode, study)))


def correct_triplet(store: "Store", annotator: str, response_id: str, triplet_index: int, verdict: str,
                    reason: str = "", triplet: Sequence[str] | None = None, *, mode: str | None = None) -> int:
    """Give a human verdict on the ``triplet_index``-th triplet of a response's Tri-HE evidence.

    ``triplet`` (subject, predicate, object), when given, lets the verdict be matched
    to judges whose triplet lists are ordered differently.
    """
    if verdict not in CORRECTION_VERDICTS:
        raise ValidationError(f"verdict must be one of {CORRECTION_VERDICTS}, got {verdict!r}")
    if not isinstance(triplet_index, int) or isinstance(triplet_index, bool) or triplet_index < 0:
        raise ValidationError(f"triplet_index must be a non-negative integer, got {triplet_index!r}")
    if triplet is not None and len(triplet) != 3:
        raise ValidationError(f"triplet must have subject, predicate and object, got {triplet!r}")
    value = {"verdict": verdict, "reason": str(reason),
             "triplet": [str(x) for x in triplet] if triplet is not None else None}
    return store.append_event(HumanEvent(_name(annotator), "correction", response_id, value,
                                         target=f"triplet:{triplet_index}", meta=_meta(mode, None)))


def review_edit(store: "Store", annotator: str, response_id: str, edit_index: int, accept: bool, *,
                mode: str | None = None) -> int:
    """Accept or reject the ``edit_index``-th edit of a response's Evaluate-by-Edit revision."""
    if not isinstance(edit_index, int) or isinstance(edit_index, bool) or edit_index < 0:
        raise ValidationError(f"edit_index must be a non-negative integer, got {edit_index!r}")
    if not isinstance(accept, bool):
        raise ValidationError(f"accept must be True or False, got {accept!r}")
    return store.append_event(HumanEvent(_name(annotator), "revision_review", response_id, {"accept": accept},
                                         target=f"edit:{edit_index}", meta=_meta(mode, None)))


def add_note(store: "Store", annotator: str, response_id: str | None, text: str, target: str = "") -> int:
    """Attach a free-text note to a response (or to a target inside it, e.g. ``"triplet:2"``)."""
    if not str(text).strip():
        raise ValidationError("a note needs some text")
    return store.append_event(HumanEvent(_name(annotator), "note", response_id, {"text": str(text)}, target=target))


def prefer(store: "Store", annotator: str, response_a: str, response_b: str, winner: str,
           aspect: str = "overall") -> int:
    """Record which of two responses is better (``winner`` is one of their ids, or ``"tie"``).

    ``aspect`` follows PerturboLLaVA's user study: ``precision`` (less content absent
    from the image), ``recall`` (describes more of the image), or ``overall``.
    """
    if response_a == response_b:
        raise ValidationError(f"a preference needs two different responses, got {response_a!r} twice")
    if winner not in (response_a, response_b, "tie"):
        raise ValidationError(f"winner must be {response_a!r}, {response_b!r} or 'tie', got {winner!r}")
    if aspect not in PREFERENCE_ASPECTS:
        raise ValidationError(f"aspect must be one of {PREFERENCE_ASPECTS}, got {aspect!r}")
    value = {"a": response_a, "b": response_b, "winner": winner, "aspect": aspect}
    return store.append_event(HumanEvent(_name(annotator), "preference", response_a, value,
                                         target=f"vs:{response_b}:{aspect}"))


def undo_last(store: "Store", annotator: str, response_id: str | None = None) -> int | None:
    """Undo the annotator's own latest event not yet undone (on ``response_id`` if given).

    The undo is a new event; nothing is deleted. Returns its id, or None when there
    is nothing of this annotator's left to undo (another's events are never touched).
    """
    return store.undo_latest_event(_name(annotator), response_id)


# --------------------------------------------------------------------------- deriving


def active_events(events: Iterable[HumanEvent]) -> list[HumanEvent]:
    """The events in force, oldest first: not undos, and not undone by an undo in force
    (``model.undone_event_ids``, the definition the store's SQL uses too)."""
    ordered = sorted(events, key=lambda e: (e.id is None, e.id or 0))
    undone = undone_event_ids((e.id, e.undoes) for e in ordered if e.kind == "undo")
    return [e for e in ordered if e.kind != "undo" and (e.id is None or e.id not in undone)]


def _latest(events: Iterable[HumanEvent], kind: str) -> dict[tuple[Any, ...], HumanEvent]:
    latest: dict[tuple[Any, ...], HumanEvent] = {}
    for event in active_events(events):
        if event.kind == kind:
            latest[(event.response_id, event.annotator, event.target)] = event
    return latest


def _index(target: str, prefix: str) -> int:
    """The number in a target such as ``"triplet:2"`` (``prefix`` with its colon), else -1."""
    return int(target.split(":", 1)[1]) if target.startswith(prefix) else -1


def current_rating_events(events: Iterable[HumanEvent]) -> dict[tuple[str, str], HumanEvent]:
    """``{(response_id, annotator): the rating event in force}`` (its latest rating not undone)."""
    return {(rid, ann): e for (rid, ann, _), e in _latest(events, "rating").items()}


def current_ratings(events: Iterable[HumanEvent]) -> dict[tuple[str, str], int]:
    """``{(response_id, annotator): rating}`` from the log (latest rating in force)."""
    return {key: int(e.value) for key, e in current_rating_events(events).items()}


RESOLVED_RATING_COLUMNS: tuple[str, ...] = (
    "response_id", "sample_id", "run_id", "model", "annotator", "rating", "event_id", "rated_at")


def resolved_ratings(store: "Store") -> list[dict[str, Any]]:
    """Each annotator's current rating of each response, one row per (response, annotator), in
    response order: what the ``ratings`` export writes beside the raw event log (``judgments``).

    Row keys: ``RESOLVED_RATING_COLUMNS`` (event_id: the rating event in force). Undone ratings are left out; a changed rating shows its latest value.
    """
    current = current_rating_events(store.list_events_of_kinds(["rating", "undo"]))
    responses = store.get_responses(sorted({rid for rid, _ in current}))
    models = {r["id"]: r["model"] for r in store.list_runs()}
    rows = []
    for (rid, annotator), event in current.items():
        response = responses.get(rid)
        run_id = response.run_id if response else None
        rows.append({"response_id": rid, "sample_id": response.sample_id if response else None, "run_id": run_id,
                     "model": models.get(run_id) if run_id else None, "annotator": annotator,
                     "rating": int(event.value), "event_id": event.id, "rated_at": event.created_at})
    rows.sort(key=lambda r: (str(r["run_id"]), str(r["sample_id"]), r["response_id"], r["annotator"]))
    return rows


def current_corrections(events: Iterable[HumanEvent]) -> dict[tuple[str, str, int], dict[str, Any]]:
    """``{(response_id, annotator, triplet_index): {"verdict", "reason", "triplet"}}``."""
    return {(rid, ann, _index(target, "triplet:")): dict(e.value)
            for (rid, ann, target), e in _latest(events, "correction").items()}


def current_edit_reviews(events: Iterable[HumanEvent]) -> dict[tuple[str, str, int], bool]:
    """``{(response_id, annotator, edit_index): accepted}``."""
    return {(rid, ann, _index(target, "edit:")): bool(e.value["accept"])
            for (rid, ann, target), e in _latest(events, "revision_review").items()}


def current_notes(events: Iterable[HumanEvent]) -> list[HumanEvent]:
    """Notes in force, oldest first (notes accumulate; an undo removes one)."""
    return [e for e in active_events(events) if e.kind == "note"]


def preferences(events: Iterable[HumanEvent]) -> list[Preference]:
    """Each annotator's latest choice per pair of responses and aspect (the pair in either order)."""
    latest: dict[tuple[str, frozenset[str], str], Preference] = {}
    for e in active_events(events):
        if e.kind != "preference":
            continue
        v = e.value
        latest[(e.annotator, frozenset((v["a"], v["b"])), v["aspect"])] = Preference(
            e.annotator, v["a"], v["b"], v["winner"], v["aspect"])
    return list(latest.values())


def current_labels(events: Iterable[HumanEvent]) -> dict[tuple[str, str], str]:
    """``{(response_id, annotator): label}`` of whole responses (``label`` events, e.g. imported from a study)."""
    return {(rid, ann): str(e.value["label"]) for (rid, ann, _), e in _latest(events, "label").items()}


def current_span_labels(events: Iterable[HumanEvent]) -> dict[tuple[str, str, int, int], str]:
    """``{(response_id, annotator, start, end): label}``: character spans of responses people labelled."""
    return {(rid, ann, int(e.value["start"]), int(e.value["end"])): str(e.value["label"])
            for (rid, ann, _), e in _latest(events, "span_label").items()}


def current_fact_labels(events: Iterable[HumanEvent]) -> dict[tuple[str, str, int], dict[str, str]]:
    """``{(response_id, annotator, fact_index): {"fact", "label"}}``: atomic facts of responses, labelled."""
    return {(rid, ann, _index(target, "fact:")): {"fact": str(e.value["fact"]), "label": str(e.value["label"])}
            for (rid, ann, target), e in _latest(events, "fact_label").items()}


def current_comparisons(events: Iterable[HumanEvent]) -> dict[tuple[str, str, str, str], int]:
    """``{(response_id, annotator, other, aspect): score}``: side-by-side ratings of a response against another
    text (``model.COMPARISON_RANGE``; positive: the response is the better one)."""
    return {(rid, ann, str(e.value["other"]), str(e.value["aspect"])): int(e.value["score"])
            for (rid, ann, _), e in _latest(events, "comparison").items()}


# --------------------------------------------------------------------------- queues


def triplet_disagreements(judge_verdicts: dict[str, list[tuple[tuple[str, str, str] | None, str]]],
                          human_verdicts: Sequence[tuple[int, dict[str, Any]]] = ()) -> int:
    """How many triplets of one response get different verdicts from judges or people.

    ``judge_verdicts`` maps a judge to its ``[(triplet, verdict), ...]`` in evidence order;
    ``human_verdicts`` are ``(triplet_index, correction value)`` pairs. Triplets are
    matched by their text when known, else by position; unparseable verdicts take no side.

    >>> triplet_disagreements({"nli": [(("cat", "on", "mat"), "supported")],
    ...                        "llm": [(("cat", "on", "mat"), "relation")]})
    1
    """
    seen: dict[Any, set[str]] = {}
    for verdicts in judge_verdicts.values():
        for i, (triplet, verdict) in enumerate(verdicts):
            if verdict != "unparseable":
                seen.setdefault(triplet if triplet is not None else i, set()).add(verdict)
    positions = {}
    for verdicts in judge_verdicts.values():
        for i, (triplet, _) in enumerate(verdicts):
            positions.setdefault(i, triplet if triplet is not None else i)
    for index, value in human_verdicts:
        key = tuple(value["triplet"]) if value.get("triplet") else positions.get(index, index)
        seen.setdefault(key, set()).add(value["verdict"])
    return sum(1 for verdicts in seen.values() if len(verdicts) > 1)


def triplet_disagreement_counts(store: "Store", response_ids: set[str] | None = None) -> dict[str, int]:
    """Per response, its triplet disagreements (``triplet_disagreements``): how many of its triplets get
    different verdicts from the Tri-HE judges (each stored configuration is one) and this studio's corrections
    in force. What Annotate's ``disagreement`` queue orders by; Browse's per-response "judges differ" and
    "human differs" flags are other, coarser tests (``Store.browse_responses``)."""
    judges: dict[str, dict[str, list[tuple[tuple[str, str, str] | None, str]]]] = {}
    from ..metrics.registry import spec_with

    spec = spec_with("corrected_claims")  # the metric whose claims people correct
    for response, score in store.iter_scores(spec.name, with_evidence=True) if spec is not None else ():
        if response_ids is not None and response.id not in response_ids:
            continue
        judge = f"{score.evidence.get('judge', '?')}@{score.config_key}"
        judges.setdefault(response.id, {})[judge] = spec.corrected_claims(score.evidence)
    humans: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for (rid, _annotator, index), value in current_corrections(
            store.list_events_of_kinds(["correction", "undo"], source=APP_SOURCE)).items():
        if response_ids is None or rid in response_ids:
            humans.setdefault(rid, []).append((index, value))
    out = {}
    for rid in set(judges) | set(humans):
        n = triplet_disagreements(judges.get(rid, {}), humans.get(rid, ()))
        if n:
            out[rid] = n
    return out


def mixed_queue(store: "Store", annotator: str, run_id: str | None = None,
                benchmark: str | None = None) -> list[str]:
    """Every response (of ``run_id``, of ``benchmark``) in ``annotator``'s own order without a study
    (``design.annotator_order``: seeded by their name, models, tasks and images take turns)."""
    listed = store.response_ids(run_id=run_id, benchmark=benchmark)
    return mixed_order(listed, store.study_candidates(store.run_ids()), annotator)


def annotation_queue(store: "Store", annotator: str, mode: str = "unrated", ratings_per_item: int = 1,
                     limit: int = 50, run_id: str | None = None, benchmark: str | None = None,
                     study: str | None = None) -> list[str]:
    """The next responses for ``annotator`` to look at, best first.

    ``unrated``: responses this annotator has not rated that have fewer than
    ``ratings_per_item`` ratings, least-rated first, then in the annotator's own mixed order
    (``mixed_queue``: models, tasks and images take turns). ``disagreement``: responses with a triplet
    disagreement (``triplet_disagreement_counts``: the Tri-HE judges disagree on a triplet with each other
    or with a person's correction), most first, leaving out those this annotator has already corrected.
    ``uncorrected``: every response with judged Tri-HE claims that this annotator has not
    corrected, those with disagreements first (most first), then the rest in the annotator's mixed order.
    ``study``: the study's own queue (``study_queue``; ``mode`` and ``ratings_per_item`` are the study's).
    Only this studio's judgements count (source ``"app"``), never imported ones.
    """
    annotator = _name(annotator)
    if study:
        return study_queue(store, annotator, study, limit=limit)
    if mode not in QUEUE_MODES:
        raise ValidationError(f"queue mode must be one of {QUEUE_MODES}, got {mode!r}")
    if ratings_per_item < 1:
        raise ValidationError(f"ratings_per_item must be at least 1, got {ratings_per_item}")
    candidates = mixed_queue(store, annotator, run_id=run_id, benchmark=benchmark)
    order = {rid: i for i, rid in enumerate(candidates)}
    # The queues are the studio's own annotators': ratings imported from an outside study do not fill them.
    if mode == "unrated":
        ratings = current_ratings(store.list_events_of_kinds(["rating", "undo"], source=APP_SOURCE))
        return unrated_order(candidates, ratings, annotator, ratings_per_item)[:limit]
    disagreements = triplet_disagreement_counts(store, set(candidates))
    corrected = {rid for rid, ann, _ in current_corrections(
        store.list_events_of_kinds(["correction", "undo"], source=APP_SOURCE)) if ann == annotator}
    pool = set(disagreements)
    from ..metrics.registry import spec_with

    spec = spec_with("corrected_claims")
    if mode == "uncorrected" and spec is not None:
        pool |= {response.id for response, score in store.iter_scores(spec.name, with_evidence=True)
                 if response.id in order and spec.corrected_claims(score.evidence)}
    todo = [rid for rid in pool if rid not in corrected]
    todo.sort(key=lambda rid: (-disagreements.get(rid, 0), order[rid]))
    return todo[:limit]


# --------------------------------------------------------------------------- studies


def create_study(store: "Store", design: "StudyDesign", author: str | None = None) -> "DrawnSample":
    """Draw the study's sample (``annotation.design.draw_sample``, seeded) and record it with its design.
    A study is fixed once made: its name cannot be reused, and a changed design is a new study."""
    from .design import draw_sample

    if store.get_study(design.name) is not None:
        raise ValidationError(f"a study named {design.name!r} already exists; a changed design needs a new name")
    known = {r["id"] for r in store.list_runs()}
    if missing := [r for r in design.runs if r not in known]:
        raise ValidationError(f"no run {missing[0]!r} in the store")
    drawn = draw_sample(design, store.study_candidates(list(design.runs)))
    store.add_study(design.name, {**design.to_dict(), "drawn": drawn.summary()},
                    [i.response_id for i in drawn.items], author)
    return drawn


def study_design(store: "Store", study: str) -> "StudyDesign":
    """A stored study's design (a ``ValidationError`` names a study that is not there)."""
    return _stored_study(store, study)[0]


def _stored_study(store: "Store", study: str) -> tuple["StudyDesign", list[str]]:
    from .design import StudyDesign

    found = store.get_study(study)
    if found is None:
        names = ", ".join(s["id"] for s in store.list_studies()) or "none yet"
        raise ValidationError(f"no study named {study!r} (studies: {names})")
    return StudyDesign.from_dict(found["definition"]), found.get("items") or []


def study_rating_events(events: Iterable[HumanEvent], study: str) -> dict[tuple[str, str], HumanEvent]:
    """``{(response_id, annotator): rating in force}`` among the ratings made in ``study`` (this studio's only).
    A rating of the same response made outside the study (unblinded, say) is not the study's."""
    kept = [e for e in events if e.source == APP_SOURCE and (e.kind == "undo" or (e.meta or {}).get("study") == study)]
    return current_rating_events(kept)


def _study_state(store: "Store", study: str) -> tuple["StudyDesign", list[str], dict[tuple[str, str], HumanEvent]]:
    design, items = _stored_study(store, study)
    # the events on the study's items only (an undo carries its response): a keyed read, not every rating
    current = study_rating_events(store.list_events_of_kinds(["rating", "undo"], source=APP_SOURCE,
                                                             response_ids=items), study)
    return design, items, current


def check_study_annotator(design: "StudyDesign", annotator: str) -> None:
    """Refuse someone who is not among a study's annotators (a study naming none takes anyone)."""
    if design.annotators and annotator not in design.annotators:
        raise ValidationError(f"{annotator!r} is not an annotator of study {design.name!r} "
                              f"(its annotators: {', '.join(design.annotators)})")


def study_queue(store: "Store", annotator: str, study: str, limit: int = 50) -> list[str]:
    """The annotator's next responses in ``study``: those they have not rated there that still need
    ratings, ordered so that no model (and, with enough images, no image) runs ahead of its share of
    their own sequence (``annotation.design.queue_order``)."""
    return _study_queue(store, annotator, study, limit)[0]


def study_next(store: "Store", annotator: str, study: str, after: str | None = None) -> tuple[str | None, int]:
    """The annotator's next response in ``study`` (None: none left) and how many are left for them; ``after``, the
    one on screen, is skipped unless it is the last. Two picks ordered, of the study's items only: a key press."""
    order, remaining = _study_queue(store, annotator, study, limit=2)
    skip = bool(after and len(order) > 1 and order[0] == after.strip())
    return (order[1] if skip else order[0] if order else None), remaining


def _study_queue(store: "Store", annotator: str, study: str, limit: int) -> tuple[list[str], int]:
    from .design import Item, open_items, queue_order

    annotator = _name(annotator)
    design, items, current = _study_state(store, study)
    check_study_annotator(design, annotator)
    where = {r["response_id"]: r for r in store.study_candidates(list(design.runs), response_ids=items)}
    listed = [Item(rid, where[rid]["run_id"], f"{where[rid]['benchmark']}/{where[rid]['image']}")
              for rid in items if rid in where]
    counts = Counter(rid for rid, _ in current)
    history = [e.response_id for (rid, ann), e in sorted(current.items(), key=lambda kv: kv[1].id or 0)
               if ann == annotator]
    order = queue_order(listed, counts, history, design.ratings_per_item, limit=limit)
    return [listed[k].response_id for k in order], len(open_items(listed, counts, history, design.ratings_per_item))


def study_progress(store: "Store", study: str) -> dict[str, Any]:
    """How far a study is: items, ratings needed and made (counting at most ``ratings_per_item`` per
    item), items complete, and per annotator and per model the ratings made.

    ``{"study", "mode", "items", "ratings_per_item", "needed", "done", "complete", "annotators": {name: n},
    "models": {run_id: [done, needed]}}``
    """
    design, items, current = _study_state(store, study)
    counts = Counter(rid for rid, _ in current)
    runs = {r["response_id"]: r["run_id"] for r in store.study_candidates(list(design.runs), response_ids=items)}
    k = design.ratings_per_item
    models: dict[str, list[int]] = {}
    for rid in items:
        entry = models.setdefault(runs.get(rid, "?"), [0, 0])
        entry[0] += min(counts[rid], k)
        entry[1] += k
    return {"study": study, "mode": design.mode, "items": len(items), "ratings_per_item": k,
            "needed": len(items) * k, "done": sum(min(counts[rid], k) for rid in items),
            "complete": sum(1 for rid in items if counts[rid] >= k),
            "annotators": dict(sorted(Counter(ann for _, ann in current).items())), "models": models}
