"""What a sample's references settle (``Scope``): the one value every metric, judge, reviser and baseline reads.

A sample's references may be a scene graph, gold triplets, human captions of the kind ``Sample.reference_kind``
says (short captions, or a dense description), an object list complete within a vocabulary, or a mix.
``Scope.of_sample`` is the one function that reads them (the reference kind included); the grounding, the
judges, HalFscore's matcher, EMD's grounded cost, the revisers, the scoring pipeline and Inspect take its value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .lexicon.vocabularies import Vocabulary
    from .model import Sample


@dataclass(frozen=True)
class Scope:
    """What a sample's references settle, whatever their concepts: the one value every metric, judge, reviser and
    baseline reads, built from a sample by ``Scope.of_sample`` alone (the only place a reference's kind is read).

    - ``objects``: a thing the reference does not name is not in the picture. True of a scene graph
      (read as complete, as Tri-HE reads its graphs) and of a dense description of the image
      (``Sample.reference_kind == "dense"``: DCI's, IIW's: it names what is there); not of short captions
      (COCO's five each mention what struck their writer) or an object list (complete only within its vocabulary).
    - ``details``: an attribute, number or relation the reference does not give is untrue. True of a
      scene graph only; captions and object lists settle what they state and what contradicts it
      (another colour for an object they name, another number they give, the contrary place).
    - ``vocabulary`` and ``present``: an object list complete within a vocabulary (COCO's instance
      annotations): a category of the vocabulary the list lacks is absent, whatever the captions say;
      a name outside the vocabulary is one the list says nothing about.
    - ``basis``: where the reference concepts come from, in order of trust: ``scene_graph``, ``reference_text``
      (the captions), ``gold_triplets``, ``reference_objects`` (an object list alone), or None.
    - ``captions``: how many caption texts there are; ``dense``: they are one dense description; ``listed``: the
      sample has an object list.

    >>> from hallu_studio.lexicon.vocabularies import vocabulary
    >>> coco = Scope(objects=False, details=False, vocabulary=vocabulary("coco-80"), present=frozenset({"person"}))
    >>> coco.absence("cat"), coco.absence("tree"), coco.presence("man"), coco.closed, Scope().closed
    ("'cat' is a coco-80 category the image's object list does not hold", None, 'person', False, True)
    >>> from hallu_studio.model import Sample
    >>> one = dict(id="b/1", benchmark="b", image_key="1")
    >>> Scope.of_sample(Sample(**one, reference_text="A bird on a branch.")).summary()
    'reference: 1 short caption (open-world)'
    >>> Scope.of_sample(Sample(**one, reference_text=["A bird on a branch."], reference_kind="dense")).summary()
    "reference: a dense description (what it doesn't name is absent)"
    """

    objects: bool = True
    details: bool = True
    vocabulary: "Vocabulary | None" = None
    present: frozenset[str] = frozenset()
    basis: str | None = "scene_graph"
    captions: int = 0
    dense: bool = False
    listed: bool = False

    @property
    def none(self) -> bool:
        """No reference at all (a folder of one's own images): nothing a reference-reading metric can check."""
        return self.basis is None and not self.listed

    @property
    def closed(self) -> bool:
        """Complete in every respect: a scene graph's reading."""
        return self.objects and self.details

    def absence(self, name: str) -> str | None:
        """Why the object list settles that ``name`` is not in the picture (its vocabulary names it and the list
        lacks it), or None when it cannot say."""
        category = self.vocabulary.category_of(name) if self.vocabulary is not None else None
        if category is None or category in self.present:
            return None
        return f"{category!r} is a {self.vocabulary.describe()} category the image's object list does not hold"  # type: ignore[union-attr]

    def presence(self, name: str) -> str | None:
        """The object list's category ``name`` falls under, where the list holds it; else None."""
        category = self.vocabulary.category_of(name) if self.vocabulary is not None else None
        return category if category is not None and category in self.present else None

    def _captions_said(self) -> str:
        return f"{self.captions} short caption{'s' if self.captions != 1 else ''}"

    def describe(self) -> str:
        """What the evidence says the reference is read as."""
        if self.closed:
            return "complete (a scene graph)"
        if self.objects:
            read = "a dense description: what it does not name is not there; attributes, numbers and relations it " \
                   "does not give are unverifiable"
        else:
            read = "open-world: what the references do not mention is unverifiable"
            read = f"{self._captions_said()}, {read}" if self.captions else read
        listed = f"; an object list complete within {self.vocabulary.describe()}" if self.vocabulary else ""
        return read + listed

    def summary(self) -> str:
        """One short line naming the reference's kind, for the Inspect view."""
        if self.closed:
            return "reference: " + ("gold triplets (complete)" if self.basis == "gold_triplets"
                                    else "a scene graph (complete)")
        parts = ["a dense description (what it doesn't name is absent)" if self.dense
                 else f"{self._captions_said()} (open-world)"] if self.captions else []
        if self.vocabulary is not None:
            parts.append(f"an object list complete within {self.vocabulary.describe()}")
        elif self.listed:
            parts.append("an object list (open-world)")
        return "reference: " + (" + ".join(parts) or "none")

    @classmethod
    def of_sample(cls, sample: "Sample") -> "Scope":
        """A scene graph (or, alone, gold triplets) is complete; captions marked ``dense`` complete in their
        objects; short captions and object lists are open, the list complete within its ``reference_vocabulary``.
        The sample's ``reference_kind`` decides, never whether its ``reference_text`` is a string or a list."""
        from .lexicon.vocabularies import vocabulary

        captions = sample.reference_captions
        graph = not sample.scene_graph.is_empty()
        basis = ("scene_graph" if graph else "reference_text" if captions else "gold_triplets" if sample.gold_triplets
                 else "reference_objects" if sample.reference_objects else None)
        dense = bool(captions) and sample.reference_kind == "dense"
        said = {"basis": basis, "captions": len(captions), "dense": dense,
                "listed": sample.reference_objects is not None}
        if graph or (bool(sample.gold_triplets) and not captions and sample.reference_objects is None):
            return cls(**said)  # type: ignore[arg-type]
        if sample.reference_objects is None or sample.reference_vocabulary is None:
            return cls(objects=dense, details=False, **said)  # type: ignore[arg-type]
        vocab = vocabulary(sample.reference_vocabulary)
        return cls(objects=dense, details=False, vocabulary=vocab,  # type: ignore[arg-type]
                   present=frozenset(vocab.categories_of(sample.reference_objects)), **said)


CLOSED = Scope()  # a scene graph's
DENSE_CAPTION = Scope(details=False, basis="reference_text", captions=1, dense=True)  # one caption marked dense
