"""VISCON Evaluate-by-Edit (§3.2.2): revise a response against the image's concepts, count word edits.

Per item: the word-level edit distance between the response and its revision, the distance per
word of the response, and the word count; corpus level: the means and the slope α of total
distance against length (Table 3). The revision comes from a reviser (``SceneGraphRuleReviser``
offline, ``LLMReviser`` with an LLM) over the sample's scene graph; a sample with only reference
triplets or a dense caption gets a graph built from those reference concepts.

Worked example (hand-counted): a graph with a blue car on a street and the response
"A red car is parked on the street next to a dog." (12 words). The rule reviser answers
GetDescription(dog) NONE and finds red/blue in conflict, giving "A blue car is parked on the
street." (8 words): one substitution (red -> blue) and four deletions (next to a dog), so the
distance is 5 and the distance per word 5 / 12.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

from ..reference_scope import Scope
from ..model import ConceptSet, SceneGraph
from .base import ItemResult, ScoringItem
from .evidence import HALLUCINATED, OMITTED, EvidenceRow
from .flagging import edited_word_spans
from .spec import MetricSpec, Number, Plot
from .edit_distance import edit_slope_alpha, word_edit_distance, word_spans
from .reference_concepts import reference_concepts_many, reference_source
from ..revision.reviser import Reviser

# A reference that settles nothing (no reference at all): only the image judge can say an object is not there.
NOTHING_SETTLED = Scope(objects=False, details=False)

if TYPE_CHECKING:
    from ..components import Components
    from ..config import Settings
    from ..revision.rule_reviser import Revision



def graph_from_concepts(concepts: ConceptSet) -> SceneGraph:
    """A scene graph with one object per distinct name, holding its attributes and relations."""
    names = list(dict.fromkeys([o.name for o in concepts.objects] + [a.object for a in concepts.attributes]
                               + [n for r in concepts.relations for n in (r.subject, r.object)]))
    ids = {n: f"o{i}" for i, n in enumerate(names)}
    attrs: dict[str, list[str]] = {n: [] for n in names}
    for a in concepts.attributes:
        if a.attribute not in attrs[a.object]:
            attrs[a.object].append(a.attribute)
    return SceneGraph.from_dict({
        "objects": [{"id": ids[n], "name": n, "attributes": attrs[n]} for n in names],
        "relations": [{"subject": ids[r.subject], "predicate": r.predicate, "object": ids[r.object]}
                      for r in concepts.relations],
    })


def flagged_spans(values: Mapping[str, Any], evidence: Mapping[str, Any], text: str,
                  concepts: Mapping[str, Any] | None = None) -> list[tuple[int, int]]:
    """The original words the reviser deleted or substituted."""
    return edited_word_spans(text, evidence.get("alignment") or [])


def revision_edits(evidence: Mapping[str, Any]) -> int:
    """How many edits the revision made (its alignment's steps other than "equal"): what people review in Annotate.

    >>> revision_edits({"alignment": [["equal", ["a"], ["a"]], ["delete", ["red"], []], ["insert", [], ["blue"]]]})
    2
    """
    return sum(1 for step in evidence.get("alignment") or [] if step[0] != "equal")


def evidence_rows(values: Mapping[str, Any], evidence: Mapping[str, Any], text: str) -> list[EvidenceRow]:
    """One row per edit of the minimal revision, numbered as Annotate's review list numbers them (from 0): what it
    removed or replaced is hallucinated by the reviser's reading, what it inserted was missing (omitted).

    >>> for r in evidence_rows({}, {"original": "A red car.", "alignment": [["equal", ["A"], ["A"]],
    ...                         ["substitute", ["red"], ["blue"]], ["equal", ["car"], ["car"]]]}, "A red car."):
    ...     print(r.text, "|", r.verdict_words, "|", r.span)
    edit 0: red → blue | hallucinated (edit) | (2, 5)
    """
    original = evidence.get("original")
    words = word_spans(original if isinstance(original, str) else text)
    rows, at, number = [], 0, 0
    for step in evidence.get("alignment") or []:
        op, old, new = str(step[0]), [str(w) for w in step[1] or []], [str(w) for w in step[2] or []]
        here = words[at:at + len(old)]
        at += len(old)
        if op == "equal":
            continue
        span = (here[0][0], here[-1][1]) if here and len(here) == len(old) else None
        if op == "insert":
            rows.append(EvidenceRow(f"edit {number}: + {' '.join(new)}", OMITTED, kind="edit", reason="the reviser "
                                    "inserted it to make the response agree with the reference"))
        else:
            said = f"{' '.join(old)} → {' '.join(new)}" if op == "substitute" else f"− {' '.join(old)}"
            rows.append(EvidenceRow(f"edit {number}: {said}", HALLUCINATED, kind="edit", span=span,
                                    reason=f"the reviser {'replaced' if op == 'substitute' else 'removed'} it to make "
                                           "the response agree with the reference"))
        number += 1
    return rows

class EvaluateByEditMetric:
    """Word edit distance between a response and its scene-graph-driven revision."""

    spec = MetricSpec(
        "edit", "Evaluate-by-Edit", family="VISCON", tasks=("caption", "vqa"),
        headline=Number("per_word", "edits/word", "per word", lower_is_better=True,
                        plain="words changed to make an answer true to the image, per word written (0 = nothing "
                              "to fix)",
                        meaning="word edits the reviser makes to fit the scene graph, per word of the answer, "
                                "averaged over answers.",
                        misleads="the offline reviser only deletes objects and fixes colours, and over-deletes things "
                                 "the graph does not list."),
        summary=("distance", "alpha"),
        item=Number("per_word", "edits/word", "per word", lower_is_better=True,
                    meaning="this answer's word edits per word."),
        flagged_spans=flagged_spans, reviewed_edits=revision_edits, evidence_rows=evidence_rows,
        panel="edit_diff",
        hallucination_scores=(Number("per_word", "edit per word", "per word", lower_is_better=True,
                                     meaning="Evaluate-by-Edit: word edits of the revision per word"),),
        plots=(Plot("scatter", "edit distance vs length", "Fig. 5b; α is the per-model slope",
                    "edit distance (words changed)", ("words", "distance"), x_axis="response length (words)",
                    slope=edit_slope_alpha, slope_name="α"),),
        demo=True,
        settings=("scoring.reviser", "scoring.embedding_model", "llm.model", "scoring.vlm_judge_model",
                  "scoring.vlm_judge_template", "scoring.vlm_judge_unsettled"))
    name = spec.name

    def __init__(self, reviser: Reviser, reference_extractor: Any | None = None, image_judge: Any = None) -> None:
        self.reviser = reviser
        self.reference_extractor = reference_extractor
        # The image judge asked whether an object the reference leaves open is in the image (the database's answer
        # then NONE instead of KEEP); with no reference at all, the revision is against the image alone.
        self.image_judge = image_judge

    @property
    def needs_image(self) -> bool:
        return self.image_judge is not None

    @classmethod
    def from_settings(cls, settings: "Settings", *, components: "Components | None" = None) -> "EvaluateByEditMetric":
        """``scoring.reviser``: ``rule`` (offline default) or ``llm`` (needs ``llm.base_url`` and ``llm.model``);
        the reviser and the parser that reads reference captions come from ``components`` (built from
        ``settings`` when not given), with the image judge for what the reference leaves open where one is
        configured (``scoring.vlm_judge_model``)."""
        from ..components import Components

        parts = components if components is not None else Components(settings)
        return cls(parts.reviser(), parts.parser(), parts.unsettled_image_judge())

    def config(self) -> dict[str, Any]:
        image = {"image_judge": self.image_judge.config()} if self.image_judge is not None else {}
        return {"metric": self.name, "reviser": self.reviser.config(), "words": "letters/digits/apostrophes, casefold",
                **image}

    def _absent(self, item: ScoringItem) -> Callable[[str], bool] | None:
        """The image judge's "is this object absent from the image?" for the item, where it has an image."""
        if self.image_judge is None or item.image is None:
            return None
        from ..judges.base import EXISTENCE_OBJECT, EXISTENCE_PREDICATE, JudgeReference

        reference = JudgeReference(source="none", image=item.image, image_sha256=item.sample.image_sha256)
        judge = self.image_judge
        return lambda name: judge.judge([(name, EXISTENCE_PREDICATE, EXISTENCE_OBJECT)], reference)[0].verdict \
            != "supported"

    def update(self, item: ScoringItem) -> ItemResult:
        return self.update_many([item])[0]

    def update_many(self, items: Sequence[ScoringItem]) -> list[ItemResult]:
        graphs: list[SceneGraph | None] = [None] * len(items)
        need_reference = [i for i, it in enumerate(items) if it.sample.scene_graph.is_empty()
                          and reference_source(it.sample) is not None]
        for i, it in enumerate(items):
            if not it.sample.scene_graph.is_empty():
                graphs[i] = it.sample.scene_graph
        if need_reference:
            refs = reference_concepts_many([items[i].sample for i in need_reference], self.reference_extractor)
            for i, concepts in zip(need_reference, refs):
                graphs[i] = graph_from_concepts(concepts) if len(concepts) else None
        absents = [self._absent(it) for it in items]
        scopes = [Scope.of_sample(it.sample) for it in items]
        for i, g in enumerate(graphs):
            if g is None and absents[i] is not None:  # no reference: revised against the image alone
                graphs[i], scopes[i] = SceneGraph(), NOTHING_SETTLED
        todo = [i for i, g in enumerate(graphs) if g is not None]
        seeing = [absents[i] for i in todo]
        extra = (seeing,) if any(a is not None for a in seeing) else ()  # a reviser without the image judge: as before
        revisions = self.reviser.revise_many([items[i].response for i in todo], [graphs[i] for i in todo],  # type: ignore[misc]
                                             [scopes[i] for i in todo], *extra)
        by_item = dict(zip(todo, revisions))
        out: list[ItemResult] = []
        for i, item in enumerate(items):
            if i not in by_item:
                out.append(ItemResult(stats={}, values={"distance": None, "per_word": None, "words": None},
                                      undefined_reason=f"sample {item.sample.id} has no scene graph, reference "
                                                       "triplets or dense caption to revise against"))
                continue
            out.append(self._result(by_item[i]))
            if absents[i] is not None:
                out[-1].evidence["image_judge"] = self.image_judge.name
        return out

    def _result(self, revision: "Revision") -> ItemResult:
        edit = word_edit_distance(revision.original, revision.revised)
        values = {"distance": edit.distance, "per_word": edit.per_word, "words": edit.words}
        stats: dict[str, float] = {"distance": float(edit.distance), "words": float(edit.words)}
        if edit.per_word is not None:
            stats["per_word"] = edit.per_word
        evidence = {"reviser": revision.reviser, "original": revision.original, "revised": revision.revised,
                    "alignment": edit.alignment, "queries": revision.queries}
        reason = None if edit.words else "the response has no words"
        return ItemResult(stats=stats, values=values, evidence=evidence, undefined_reason=reason)

    def compute(self, stats: Sequence[dict[str, float]]) -> dict[str, float]:
        """Mean total and per-word distance (Table 3), and α when lengths vary."""
        scored = [s for s in stats if "distance" in s]
        per_word = [s["per_word"] for s in scored if "per_word" in s]
        out: dict[str, float] = {
            "distance": float(np.mean([s["distance"] for s in scored])) if scored else float("nan"),
            "per_word": float(np.mean(per_word)) if per_word else float("nan"),
            "n": float(len(scored)),
        }
        lengths = [s["words"] for s in scored]
        if len(set(lengths)) >= 2:
            out["alpha"] = edit_slope_alpha(lengths, [s["distance"] for s in scored])
        else:
            out["alpha"] = float("nan")
        return out
