"""Reference concepts of a sample, and VISCON Table 1 annotation-density statistics.

A sample's reference concepts come from its scene graph (VISCON, Tri-HE) when it has one,
else from its dense human caption (DCI / HalFscore) run through the same extractor as the
responses, so both sides share a vocabulary.

Worked example (VISCON Table 1 is the mean per image; totals are sums over images):

>>> from hallu_studio.model import Sample, SceneGraph
>>> g = SceneGraph.from_dict({"objects": [{"id": "a", "name": "dog", "attributes": ["brown", "small"]},
...                                       {"id": "b", "name": "ball"}],
...                           "relations": [{"subject": "a", "predicate": "chasing", "object": "b"}]})
>>> s1 = Sample(id="x/1", benchmark="x", image_key="1", scene_graph=g)
>>> s2 = Sample(id="x/2", benchmark="x", image_key="2")
>>> stats = concept_density([s1, s2])
>>> stats["objects"], stats["attributes"], stats["relations"], stats["images"]
({'mean': 1.0, 'total': 2}, {'mean': 1.0, 'total': 2}, {'mean': 0.5, 'total': 1}, 2)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

from ..reference_scope import Scope
from ..model import ConceptSet, ObjectConcept, Sample

if TYPE_CHECKING:
    from ..extraction.base import ConceptExtractor


def needs_reference(metric: str) -> Callable[[Sample], str | None]:
    """A spec's ``needs`` for a metric that reads a sample's references: a sample with none (``Scope.none``: an
    image with no scene graph, triplets, captions or object list) is one it does not apply to, and says why.

    >>> needs_reference("emd")(Sample(id="own/cat.jpg", benchmark="own", image_key="cat.jpg"))
    'emd needs a scene graph, reference triplets, reference captions or an object list'
    """
    def needs(sample: Sample) -> str | None:
        if Scope.of_sample(sample).none:
            return f"{metric} needs a scene graph, reference triplets, reference captions or an object list"
        return None
    return needs


def reference_source(sample: Sample) -> str | None:
    """Where a sample's reference concepts come from: ``scene_graph``, ``reference_text`` (its human captions),
    ``gold_triplets``, ``reference_objects`` (an object list alone) or None (``reference_scope.Scope.basis``)."""
    return Scope.of_sample(sample).basis


def reference_concepts(sample: Sample, extractor: "ConceptExtractor | None" = None) -> ConceptSet:
    """The concepts a response is compared with. See ``reference_concepts_many`` for batches."""
    return reference_concepts_many([sample], extractor)[0]


def reference_concepts_many(samples: Sequence[Sample], extractor: "ConceptExtractor | None" = None) -> list[ConceptSet]:
    """Reference concepts of many samples, extracting all dense captions in one batch.

    A sample with several captions gets the union of their concepts (``ConceptSet.union``); an object list
    alone gives its objects. Raises ``ValueError`` naming the sample when it only has captions and no extractor
    is given.
    """
    out: list[ConceptSet | None] = [None] * len(samples)
    to_extract: list[int] = []
    for i, sample in enumerate(samples):
        source = reference_source(sample)
        if source == "scene_graph":
            out[i] = ConceptSet.from_scene_graph(sample.scene_graph)
        elif source == "reference_text":
            if extractor is None:
                raise ValueError(f"sample {sample.id}: its reference is a caption, which needs a concept extractor")
            to_extract.append(i)
        elif source == "gold_triplets":
            out[i] = _from_triplets(sample.gold_triplets)
        elif source == "reference_objects":
            out[i] = open_world_concepts(sample, None)
        else:
            out[i] = ConceptSet()
    if to_extract and extractor is not None:
        read = CaptionConcepts(extractor)
        by_text = dict(zip(*_distinct_read(read, [c for i in to_extract for c in samples[i].reference_captions])))
        for i in to_extract:
            out[i] = open_world_concepts(samples[i], by_text.__getitem__)
    return [c if c is not None else ConceptSet() for c in out]


class CaptionConcepts:
    """Dense reference captions read by a concept extractor, as ``reference_concepts_many`` reads them.

    Called on one caption it gives that caption's concepts; ``many`` reads a batch in one extractor
    call. Tri-HE takes one as its ``reference_extract`` (``metrics.registry``) and batches through ``many``.
    ``extractor`` may be a function building it, called when the first caption is read (so building a
    metric never builds an extractor it may not need, such as an LLM one with no endpoint set).
    """

    def __init__(self, extractor: "ConceptExtractor | Callable[[], ConceptExtractor]") -> None:
        self._extractor = extractor

    @property
    def extractor(self) -> "ConceptExtractor":
        if not hasattr(self._extractor, "extract"):
            self._extractor = self._extractor()  # type: ignore[operator]
        return self._extractor  # type: ignore[return-value]

    def __call__(self, text: str) -> ConceptSet:
        return self.many([text])[0]

    def of_sample(self, sample: Sample) -> ConceptSet:
        """The union of the concepts of a sample's captions (``Sample.reference_captions``)."""
        return ConceptSet.union(self.many(sample.reference_captions))

    def many(self, texts: Sequence[str]) -> list[ConceptSet]:
        texts = list(texts)
        if not texts:
            return []
        got = list(self.extractor.extract(texts))
        if len(got) != len(texts):
            raise RuntimeError(f"extractor {getattr(self.extractor, 'name', '?')} returned {len(got)} concept sets "
                               f"for {len(texts)} reference captions")
        return got


def open_world_concepts(sample: Sample, read: "Callable[[str], ConceptSet] | None") -> ConceptSet:
    """What a sample's open-world references state: the union of its captions' concepts (each read by ``read``) and
    the objects of its object list."""
    listed = ConceptSet(objects=[ObjectConcept(n) for n in dict.fromkeys(sample.reference_objects or [])])
    read_captions = [read(c) for c in sample.reference_captions] if read is not None else []
    return ConceptSet.union(read_captions + ([listed] if listed.objects else []))


def _distinct_read(read: "CaptionConcepts", texts: Sequence[str]) -> tuple[list[str], list[ConceptSet]]:
    """Each distinct caption read once, in one batch."""
    distinct = list(dict.fromkeys(texts))
    return distinct, read.many(distinct)


def _from_triplets(triplets: Iterable[tuple[str, str, str]]) -> ConceptSet:
    """Objects and relations named by reference triplets (Tri-HE); "(x, is, red)" is an attribute."""
    from ..model import AttributeConcept, RelationConcept

    objects: dict[str, None] = {}
    attributes: list[AttributeConcept] = []
    relations: list[RelationConcept] = []
    for s, p, o in triplets:
        s, p, o = s.strip(), p.strip(), o.strip()
        objects.setdefault(s)
        if p.lower() in ("is", "are"):
            attributes.append(AttributeConcept(s, o))
        else:
            objects.setdefault(o)
            relations.append(RelationConcept(s, p, o))
    return ConceptSet(objects=[ObjectConcept(n) for n in objects], attributes=attributes, relations=relations)


def concept_density(samples: Iterable[Sample], concepts: Sequence[ConceptSet] | None = None) -> dict[str, Any]:
    """VISCON Table 1: objects / attributes / relations per image (mean) and in total.

    Counts scene-graph entries as annotated (duplicates included, as VG lists each instance),
    each image once.
    ``concepts`` may be given instead (e.g. extracted from dense captions), one per sample.
    """
    samples = list(samples)
    if concepts is None:
        # Several questions may share an image (Tri-HE, Reefknot): count each image once.
        first: dict[str, Sample] = {}
        for s in samples:
            first.setdefault(f"{s.benchmark}\x00{s.image_key}", s)
        samples = list(first.values())
        concepts = [ConceptSet.from_scene_graph(s.scene_graph) for s in samples]
    if len(concepts) != len(samples):
        raise ValueError(f"got {len(concepts)} concept sets for {len(samples)} samples")
    n = len(samples)
    totals = {
        "objects": sum(len(c.objects) for c in concepts),
        "attributes": sum(len(c.attributes) for c in concepts),
        "relations": sum(len(c.relations) for c in concepts),
    }
    out: dict[str, Any] = {k: {"mean": (v / n if n else 0.0), "total": v} for k, v in totals.items()}
    out["images"] = n
    return out


