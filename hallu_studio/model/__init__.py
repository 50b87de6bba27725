"""The data model: plain typed classes shared by every layer.

Nothing here knows about SQL, files or the UI. Each class converts to and from
plain JSON-able dicts (``to_dict`` / ``from_dict``) so that the store, the
importers and the exporters all speak the same shape. One module per family:
``base`` (validation errors, content keys, tasks, spans), ``graph`` (scene graphs),
``concepts`` (extracted concept sets), ``records`` (samples, runs, responses, scores)
and ``events`` (human input); every name is imported from ``hallu_studio.model``.
"""

from __future__ import annotations

from .base import (REFERENCE_KINDS, RELATION_CATEGORIES, TASKS, ReferenceKind, RelationCategory, Span, Task,
                   ValidationError, canonical_json, content_key, iter_chunks)
from .graph import SceneGraph, SceneObject, SceneRelation
from .concepts import AttributeConcept, ConceptSet, CountConcept, ObjectConcept, RelationConcept
from .records import Benchmark, Response, Run, Sample, Score
from .events import (APP_SOURCE, COMPARISON_RANGE, EVENT_KINDS, JUDGEMENT_LABELS, HumanEvent, check_judgement_value,
                     undone_event_ids)

__all__ = [
    "APP_SOURCE",
    "AttributeConcept",
    "Benchmark",
    "canonical_json",
    "check_judgement_value",
    "COMPARISON_RANGE",
    "ConceptSet",
    "content_key",
    "CountConcept",
    "EVENT_KINDS",
    "HumanEvent",
    "iter_chunks",
    "JUDGEMENT_LABELS",
    "ObjectConcept",
    "REFERENCE_KINDS",
    "ReferenceKind",
    "RELATION_CATEGORIES",
    "RelationCategory",
    "RelationConcept",
    "Response",
    "Run",
    "Sample",
    "SceneGraph",
    "SceneObject",
    "SceneRelation",
    "Score",
    "Span",
    "Task",
    "TASKS",
    "undone_event_ids",
    "ValidationError",
]
