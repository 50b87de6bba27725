"""CHAIR (Rohrbach et al., 2018): the share of the objects a response mentions that the image does not have.

Which mentions count (the **vocabulary**). Published CHAIR counts only the words of a fixed vocabulary,
the same for every image (COCO's 80 categories and their synonyms), and ignores any other word: an
object list settles what is inside its vocabulary and nothing outside it. Here, per sample:

- the sample's own ``reference_vocabulary`` when it names one: ``"coco-80"`` (a COCO-based benchmark,
  ``lexicon.vocabularies``) or a list of names; else the vocabulary of the collection its image comes from
  (``meta["image_source"]``, ``vocabularies.IMAGE_SOURCE_VOCABULARIES``: ``"coco"`` is COCO-80, set by
  ``importers.coco.coco_sample`` on every COCO caption sample, reference captions alone included);
- else the setting ``scoring.chair_vocabulary``: ``"image"`` (each image's own scene-graph objects, every
  object the response mentions counted: the project's reading for complete scene graphs), ``"benchmark"``
  (the union of the object names of the sample's benchmark, observed by ``observe_benchmark``) or
  ``"coco-80"``.

What the image has (the **ground truth**, ``scoring.chair_ground_truth``): ``published`` (default), its
scene-graph objects, its ``reference_objects``, and, in a fixed vocabulary, the vocabulary's objects its human
reference captions mention: Rohrbach et al. build it from COCO's instance annotations and captions together,
and read captions alone where there are no instances, though captions omit things (an object no caption names
counts as hallucinated then, and the evidence's ``ground_truth_from`` says so); ``objects``, the object list or
scene graph alone (a sample with captions only is undefined).

How a response is read (the **reading**, ``scoring.chair_reading``):

- ``studio`` (default): the extractor's object mentions (``item.mentioned.objects``), each listed object
  once; a name belongs to a category by ``Vocabulary.category_of`` (COCO's names and aliases, WordNet
  kinds: "terrier" is a dog); a mention whose category the image lacks is still present when the
  lexicon's grounding relates it to one of the image's objects (``grounding.Grounder``: "puppy" for the
  image's dog), or, optionally, when its embedding cosine to one reaches ``threshold``;
- ``released``: CHAIR's released code, word by word over the response text (``vocabularies.chair_mentions``):
  every occurrence counts, CHAIR's own synonym table (``CHAIR_SYNONYMS``: "goat" is a sheep), no grounding
  and no embeddings. With ``chair_vocabulary = "image"`` it reads COCO-80, the only vocabulary that code has.

In the ``image`` vocabulary names are compared by canonical form (lower case, determiners and numbers dropped,
singular, mapped through ``lexicon.nouns.CATEGORY_OF``); the head noun is tried too ("red sports car" is a
car), unless the name is one noun that is no kind of its head ("teddy bear", "hot dog": ``nouns.head_kind``).
Framing words ("image", "scene", "background" …) are never objects.

    CHAIR_i = 100 × Σ hallucinated mentions / Σ counted mentions
    CHAIR_s = 100 × responses with ≥ 1 hallucinated mention / responses

A response without counted mentions counts in CHAIR_s's denominator (as in the original code) and has no
per-item CHAIR_i. The evidence names the vocabulary and the reading.

Worked example (``image``). Graph {man, dog, frisbee}. Response 1 mentions "men", "puppy", "cat"
→ man ✓ (plural), dog ✓ (synonym), cat ✗: 1 of 3. Response 2 mentions "frisbee",
"the image" → frisbee ✓, image ignored: 0 of 1. CHAIR_i = 100 × 1/4 = 25,
CHAIR_s = 100 × 1/2 = 50. Under ``released`` "A cat watches the dog and the cat jumps." against {dog}
counts cat, dog, cat: CHAIR_i 2/3; the studio reading counts the extractor's cat and dog once: 1/2.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import numpy as np

from ..config import CHAIR_GROUND_TRUTHS, CHAIR_VOCABULARIES, READINGS
from ..grounding import Grounder, ReferenceGraph
from ..judges.base import PhraseEncoder, unit_rows
from ..lexicon.forms import normalize_name
from ..lexicon.nouns import CATEGORY_OF, head_kind
from ..lexicon.vocabularies import CHAIR_TABLE, IMAGE_SOURCE_VOCABULARIES, Vocabulary, chair_mentions, vocabulary
from ..lexicon.words import FRAMING_NOUNS, PRONOUNS, QUANTIFIER_NOUNS
from ..model import Sample
from .base import ItemResult, ScoringItem
from .evidence import HALLUCINATED, SUPPORTED, EvidenceRow, concept_key
from .flagging import concept_object_spans, find_phrase
from .spec import FACT_ACCURATE, FACT_HALLUCINATED, NOT_SETTLED, FactReading, MetricSpec, Number

if TYPE_CHECKING:
    from ..config import Settings

# Words that are never things in the picture: CHAIR ignores them, as it ignores words outside its vocabulary.
FRAMING_WORDS: frozenset[str] = FRAMING_NOUNS | PRONOUNS | QUANTIFIER_NOUNS


def canonical_forms(name: str) -> list[str]:
    """The canonical full phrase and head of an object name: "two red Cars" → ["red car", "car"]; a name that is
    one noun keeps its whole: "teddy bears" → ["teddy bear"] (a teddy bear is no bear)."""
    full = normalize_name(name)
    if not full:
        return []
    out = []
    for form in (full, head_kind(full)):
        canon = CATEGORY_OF.get(form, form)
        if canon and canon not in out:
            out.append(canon)
    return out


def is_framing(name: str) -> bool:
    forms = canonical_forms(name)
    return not forms or forms[-1] in FRAMING_WORDS


def sample_vocabulary(sample: Sample) -> str | list[str] | None:
    """The fixed vocabulary a sample names: its ``reference_vocabulary``, else its image collection's
    (``meta["image_source"]``: a COCO image's is COCO-80), else None.

    >>> sample_vocabulary(Sample(id="c/1", benchmark="c", image_key="1", reference_text="A dog.",
    ...                          meta={"image_source": "coco"}))
    'coco-80'
    """
    if sample.reference_vocabulary is not None:
        return sample.reference_vocabulary
    source = sample.meta.get("image_source")
    return IMAGE_SOURCE_VOCABULARIES.get(source) if isinstance(source, str) else None


def reference_names(sample: Sample) -> list[str]:
    """The names of the objects a sample's references list: its scene graph's, then its ``reference_objects``."""
    return list(dict.fromkeys([*sample.scene_graph.object_names(), *(sample.reference_objects or [])]))


def flagged_spans(values: Mapping[str, Any], evidence: Mapping[str, Any], text: str,
                  concepts: Mapping[str, Any] | None = None) -> list[tuple[int, int]]:
    """The response's mentions of the objects CHAIR calls hallucinated.

    >>> flagged_spans({}, {"hallucinated": ["dog"]}, "A dog on a mat")
    [(2, 5)]
    """
    out: list[tuple[int, int]] = []
    for name in evidence.get("hallucinated") or []:
        out.extend(concept_object_spans(concepts, str(name)) or find_phrase(text, str(name)))
    return out


def evidence_rows(values: Mapping[str, Any], evidence: Mapping[str, Any], text: str) -> list[EvidenceRow]:
    """One row per object mention CHAIR counted: hallucinated when it names no object of the ground truth.

    >>> rows = evidence_rows({}, {"mentioned": ["dog", "lamp"], "hallucinated": ["lamp"], "vocabulary": "image objects",
    ...                           "grounded": [["dog", "puppy", "synonym"]]}, "A dog and a lamp.")
    >>> [(r.text, r.verdict_words, r.span) for r in rows]
    [('dog', 'supported', (2, 5)), ('lamp', 'hallucinated (object)', (12, 16))]
    """
    bad = {str(m) for m in evidence.get("hallucinated") or []}
    grounded = {str(g[0]): g for g in evidence.get("grounded") or [] if isinstance(g, (list, tuple)) and len(g) >= 3}
    truth = str(evidence.get("ground_truth_from") or evidence.get("vocabulary") or "the image's objects")
    rows, seen = [], set()
    for name in map(str, evidence.get("mentioned") or []):
        if name in seen:
            continue
        seen.add(name)
        found = find_phrase(text, name)
        if name in bad:
            reason = f"names no object of the ground truth ({truth})"
        elif name in grounded:
            reason = f'the ground truth has it as "{grounded[name][1]}" ({grounded[name][2]})'
        else:
            reason = f"in the ground truth ({truth})"
        rows.append(EvidenceRow(name, HALLUCINATED if name in bad else SUPPORTED, kind="object", reason=reason,
                                span=found[0] if found else None, concept=concept_key("object", name)))
    return rows


def fact_verdict(values: Mapping[str, Any]) -> str:
    """A fact's verdict from CHAIR's values on it: hallucinated when an object it mentions is not in the image,
    accurate when it mentions objects and all are there, not settled when it mentions none.

    >>> fact_verdict({"hallucinated_objects": 1, "mentioned_objects": 2}), fact_verdict(
    ...     {"hallucinated_objects": 0, "mentioned_objects": 1}), fact_verdict({"mentioned_objects": 0})
    ('hallucinated', 'accurate', 'not settled')
    """
    if values.get("hallucinated_objects"):
        return FACT_HALLUCINATED
    return FACT_ACCURATE if values.get("mentioned_objects") else NOT_SETTLED


def fact_reading(values: Mapping[str, Any], evidence: Mapping[str, Any], undefined: str | None) -> FactReading:
    """One atomic fact read with CHAIR (the baseline beside the Tri-HE judge in the fact tables)."""
    hallucinated = evidence.get("hallucinated") or []
    return FactReading(fact_verdict(values), undefined or (f"not found: {', '.join(hallucinated)}"
                                                            if hallucinated else ""))


class ChairMetric:
    spec = MetricSpec(
        "chair", "CHAIR", tasks=("caption", "vqa"),
        headline=Number("chair_i", "CHAIRi", "% of objects", lower_is_better=True,
                        meaning="share of mentioned objects that are not in the image's objects (synonyms counted), "
                                "over all the objects a model's answers mention.",
                        misleads="object-only and precision-like: says nothing about attributes or relations, and "
                                 "rewards naming few objects."),
        summary=("chair_s",),
        item=Number("chair_i_item", "CHAIRi", "% of objects", lower_is_better=True,
                    meaning="share of this answer's mentioned objects that are not in the image."),
        flagged_spans=flagged_spans, fact_reading=fact_reading, evidence_rows=evidence_rows,
        hallucination_scores=(Number("chair_i_item", "chair-i", "% of objects", lower_is_better=True,
                                     meaning="CHAIR_i: mentioned objects counted as hallucinated / mentioned (x100)"),),
        settings=("scoring.chair_reading", "scoring.chair_vocabulary", "scoring.chair_ground_truth",
                  "scoring.embedding_model"))
    name = spec.name

    def __init__(self, encoder: PhraseEncoder | None = None, *, threshold: float = 0.8, model_name: str = "",
                 reading: str = "studio", vocabulary: str = "image", ground_truth: str = "published") -> None:
        if reading not in READINGS:
            raise ValueError(f"unknown CHAIR reading {reading!r}; choose {' | '.join(READINGS)}")
        if vocabulary not in CHAIR_VOCABULARIES:
            raise ValueError(f"unknown CHAIR vocabulary {vocabulary!r}; choose {' | '.join(CHAIR_VOCABULARIES)}")
        if ground_truth not in CHAIR_GROUND_TRUTHS:
            raise ValueError(f"unknown CHAIR ground truth {ground_truth!r}; choose {' | '.join(CHAIR_GROUND_TRUTHS)}")
        if reading == "released" and encoder is not None:
            raise ValueError("CHAIR's released reading matches words only: it takes no encoder")
        self.encoder = encoder
        self.threshold = threshold
        self.reading = reading
        self.vocabulary = vocabulary
        self.ground_truth = ground_truth
        self.model_name = model_name or (getattr(encoder, "model_name", type(encoder).__name__) if encoder else "")
        self._vectors: dict[str, Any] = {}  # unit vectors encoded by ``update_many`` for its batch
        self._grounder = Grounder()  # the lexicon's grounding; the embedding fallback stays this metric's own
        self._benchmarks: dict[str, Vocabulary] = {}  # ``observe_benchmark``'s vocabularies, by benchmark

    @classmethod
    def from_settings(cls, settings: "Settings", *, encoder: PhraseEncoder | None = None) -> "ChairMetric":
        """``scoring.chair_reading``, ``chair_vocabulary`` and ``chair_ground_truth``; in the studio reading the
        embedding fallback when an encoder is given (threshold 0.8)."""
        reading = settings.scoring.chair_reading
        encoder = encoder if reading == "studio" else None
        return cls(encoder, model_name=settings.scoring.embedding_identity if encoder is not None else "",
                   reading=reading, vocabulary=settings.scoring.chair_vocabulary,
                   ground_truth=settings.scoring.chair_ground_truth)

    def config(self) -> dict[str, Any]:
        out: dict[str, Any] = {"metric": self.name, "reading": self.reading, "vocabulary": self.vocabulary,
                               "framing_words": len(FRAMING_WORDS)}
        if self.ground_truth != "published":  # every CHAIR score before this setting was "published": same key
            out["ground_truth"] = self.ground_truth
        if self.reading == "studio":
            out.update(synonyms=len(CATEGORY_OF), grounding="lemma>synonym>hypernym",
                       embedding_model=self.model_name or None, threshold=self.threshold if self.encoder else None)
        else:
            out.update(synonyms=CHAIR_TABLE)
        return out

    # ------------------------------------------------------------------ the benchmark's vocabulary

    @property
    def needs_benchmark(self) -> bool:
        """Whether ``observe_benchmark`` must see each benchmark's samples before its responses are scored."""
        return self.vocabulary == "benchmark"

    def observe_benchmark(self, benchmark: str, samples: Iterable[Sample]) -> None:
        """Make the vocabulary of ``benchmark``: the union of the object names its samples list (scene graphs and
        ``reference_objects``), for ``chair_vocabulary = "benchmark"``."""
        names = sorted({normalize_name(n) for s in samples for n in reference_names(s)} - {""})
        if names:
            self._benchmarks[benchmark] = Vocabulary(f"benchmark {benchmark} ({len(names)} names)", tuple(names),
                                                     exact=self.reading == "released")

    def _vocabulary_for(self, sample: Sample) -> Vocabulary | str | None:
        """The sample's vocabulary; ``CHAIR_TABLE`` for CHAIR's own COCO table; None for the image's own objects.

        Raises ``ValueError`` for a benchmark vocabulary that was not observed.
        """
        released = self.reading == "released"
        spec: Any = sample_vocabulary(sample)
        if spec is None and (self.vocabulary == "coco-80" or self.vocabulary == "image" and released):
            spec = "coco-80"  # the released code has one vocabulary
        if spec is not None:
            if released and isinstance(spec, str) and spec.strip().lower() == "coco-80":
                return CHAIR_TABLE
            return vocabulary(spec, exact=released)
        if self.vocabulary == "benchmark":
            if sample.benchmark not in self._benchmarks:
                raise ValueError(f"CHAIR's benchmark vocabulary of {sample.benchmark!r} is unknown: the benchmark's "
                                 "samples were not observed (observe_benchmark), or they list no object")
            return self._benchmarks[sample.benchmark]
        return None

    # ------------------------------------------------------------------ scoring

    def _embedding_matches(self, names: list[str], vocabulary: list[str]) -> list[float]:
        if self.encoder is None or not names or not vocabulary:
            return [0.0] * len(names)
        sims = self._unit(names) @ self._unit(vocabulary).T
        return [float(row.max()) for row in sims]

    def _unit(self, texts: list[str]) -> Any:
        if all(t in self._vectors for t in texts):
            return np.stack([self._vectors[t] for t in texts])
        return unit_rows(self.encoder.encode(texts))  # type: ignore[union-attr]

    def update_many(self, items: Sequence[ScoringItem]) -> list[ItemResult]:
        """``update`` on each item, every phrase the embedding fallback needs encoded in ONE call first.

        One encoder call per response costs a model forward pass each; the verdicts are the same.
        """
        self._vectors = {}
        if self.encoder is not None:
            texts: set[str] = set()
            for item in items:
                try:
                    vocab = self._vocabulary_for(item.sample)
                except ValueError:
                    continue  # ``update`` says why
                names = reference_names(item.sample)
                if not names or item.mentioned is None:
                    continue
                unmatched = [m for m, _ in self._unmatched(item, vocab, names)]
                if unmatched:
                    texts.update(unmatched)
                    texts.update(names)
            if texts:
                ordered = sorted(texts)
                self._vectors = dict(zip(ordered, unit_rows(self.encoder.encode(ordered))))
        try:
            return [self.update(item) for item in items]
        finally:
            self._vectors = {}

    def _unmatched(self, item: ScoringItem, vocab: Vocabulary | str | None,
                   names: list[str]) -> list[tuple[str, str | None]]:
        """The studio reading's counted mentions that no name of the image matches by form or category, with
        their categories (None in the image vocabulary)."""
        mentions = [o.name for o in (item.mentioned.objects if item.mentioned else []) if o.name.strip()]
        if isinstance(vocab, Vocabulary):
            truth = vocab.categories_of(names) | {c for text in self._captions(item.sample)
                                                 for _, c in vocab.mentions(text)}
            found = [(m, vocab.category_of(m)) for m in mentions]
            return [(m, c) for m, c in found if c is not None and c not in truth]
        forms = {form for n in names for form in canonical_forms(n)}
        return [(m, None) for m in mentions if not is_framing(m) and not forms.intersection(canonical_forms(m))]

    def _captions(self, sample: Sample) -> list[str]:
        """The reference captions the ground truth reads (``published``: all of them; ``objects``: none)."""
        return sample.reference_captions if self.ground_truth == "published" else []

    @staticmethod
    def _truth_from(sample: Sample, captions: list[str], label: str) -> str:
        """Where the ground truth came from, for the evidence: the published reading says so, and captions alone
        say that they omit things."""
        listed = ("scene-graph objects" if not sample.scene_graph.is_empty() else
                  "instances (object list)" if sample.reference_objects is not None else "")
        said = f"the {label} objects {len(captions)} reference caption{'s' * (len(captions) != 1)} mention"
        if listed and captions:
            return f"published: {listed} ∪ {said}"
        if captions:
            return (f"published, captions alone: {said}; no object list, and captions omit things, so an object "
                    "none of them names counts as hallucinated")
        return listed or "none"

    def update(self, item: ScoringItem) -> ItemResult:
        stats = {"responses": 1.0, "hallucinated_responses": 0.0, "mentioned": 0.0, "hallucinated": 0.0}
        values: dict[str, Any] = {"hallucinated_objects": 0, "mentioned_objects": 0, "chair_i_item": None}
        sample = item.sample
        vocab = self._vocabulary_for(sample)
        label = vocab.describe() if isinstance(vocab, Vocabulary) else vocab or "image objects"
        base_evidence: dict[str, Any] = {"hallucinated": [], "mentioned": [], "reading": self.reading,
                                         "vocabulary": label}
        names = reference_names(sample)
        captions = self._captions(sample) if vocab is not None else []
        if vocab is not None:
            base_evidence["ground_truth_from"] = self._truth_from(sample, captions, label)
        # A fixed vocabulary with captions, or with an object list (even an empty one: none of it is there), settles
        # what the response names of it.
        if not names and not (vocab is not None and (captions or sample.reference_objects is not None)):
            if vocab is not None and sample.reference_captions:
                why = ("has reference captions only, and chair_ground_truth = objects reads an object list or scene "
                       "graph alone (captions omit things)")
            else:
                why = "has no scene-graph objects, object list or (with a fixed vocabulary) reference caption"
            return ItemResult({k: 0.0 for k in stats}, values, base_evidence,
                              f"sample {sample.id} {why}: CHAIR has nothing to check names against")
        if self.reading == "released":
            counted, hallucinated, evidence = self._released(item, vocab, names)
        elif item.mentioned is None:
            return ItemResult({k: 0.0 for k in stats}, values, base_evidence,
                              "no concepts were extracted for this response; run concept extraction first")
        else:
            counted, hallucinated, evidence = self._studio(item, vocab, names)
        stats.update(mentioned=float(len(counted)), hallucinated=float(len(hallucinated)),
                     hallucinated_responses=float(bool(hallucinated)))
        values.update(hallucinated_objects=len(hallucinated), mentioned_objects=len(counted),
                      chair_i_item=100.0 * len(hallucinated) / len(counted) if counted else None)
        reason = None if counted else "the response mentions no objects of CHAIR's vocabulary: CHAIR_i is undefined"
        return ItemResult(stats, values, {**base_evidence, **evidence}, reason)

    def _studio(self, item: ScoringItem, vocab: Vocabulary | str | None,
                names: list[str]) -> tuple[list[str], list[str], dict[str, Any]]:
        mentions = [o.name for o in item.mentioned.objects if o.name.strip()]  # type: ignore[union-attr]
        evidence: dict[str, Any] = {}
        if isinstance(vocab, Vocabulary):
            categories = {m: vocab.category_of(m) for m in mentions}
            counted = [m for m in mentions if categories[m] is not None]
            truth = vocab.categories_of(names) | {c for text in self._captions(item.sample)
                                                 for _, c in vocab.mentions(text)}
            evidence.update(categories={m: c for m, c in categories.items() if c is not None},
                            ground_truth=sorted(truth))
        else:
            counted = [m for m in mentions if not is_framing(m)]
        unmatched = [m for m, _ in self._unmatched(item, vocab, names)]
        grounded: list[list[str]] = []
        if unmatched and names:
            graph = ReferenceGraph.from_triplets(names, [])
            for m in unmatched:
                found = self._grounder.ground(m, graph)
                if found:
                    grounded.append([m, found[0].node.name, found[0].how])
            unmatched = [m for m in unmatched if m not in {g[0] for g in grounded}]
        sims = self._embedding_matches(unmatched, names)
        hallucinated = [m for m, sim in zip(unmatched, sims) if sim < self.threshold]
        evidence.update(hallucinated=hallucinated, mentioned=counted,
                        ignored=[m for m in mentions if m not in counted], grounded=grounded)
        return counted, hallucinated, evidence

    def _released(self, item: ScoringItem, vocab: Vocabulary | str | None,
                  names: list[str]) -> tuple[list[str], list[str], dict[str, Any]]:
        own = vocab if isinstance(vocab, Vocabulary) else None  # None: CHAIR's own COCO table
        words = chair_mentions(item.response or "", own)
        truth: set[str] = set()
        for text in (*names, *self._captions(item.sample)):
            found = own.category_of(text) if own is not None else None
            truth.update([found] if found else [c for _, c in chair_mentions(text, own)])
        hallucinated = [w for w, c in words if c not in truth]
        counted = [w for w, _ in words]
        return counted, hallucinated, {"hallucinated": hallucinated, "mentioned": counted,
                                       "categories": dict(words), "ground_truth": sorted(truth)}

    def compute(self, stats: Sequence[dict[str, float]]) -> dict[str, float]:
        total = {k: sum(s.get(k, 0.0) for s in stats) for k in ("responses", "hallucinated_responses",
                                                                 "mentioned", "hallucinated")}
        out = {"responses": total["responses"], "mentioned": total["mentioned"]}
        if total["responses"]:
            out["chair_s"] = 100.0 * total["hallucinated_responses"] / total["responses"]
        if total["mentioned"]:
            out["chair_i"] = 100.0 * total["hallucinated"] / total["mentioned"]
        return out
