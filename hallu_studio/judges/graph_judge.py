"""The scene-graph alignment judge: each claim checked against the graph's nodes and edges.

The offline default for Tri-HE. A claim ``(subject, predicate, object)`` is read as one of

- a **count** ``(dog, is, two)``: checked against the multiplicity of the grounded node;
- an **attribute** ``(laptop, is, red)``: checked against the node's attributes. A conflict
  within one family (the graph says black) is a hallucination; an attribute the graph is
  silent on is *unverifiable* (see "Silence" below);
- a **relation** ``(man, riding, horse)``: checked on the edges between the grounded nodes,
  in both directions, with predicate synonyms, passives and inverses. A conflicting edge is a
  relation hallucination, and so is no edge at all, as in the paper (against a scene graph;
  a reference caption that names both ends but does not relate them is silent: *unverifiable*);
- an **inference** (a non-visual predicate or noun: "used for transportation", "summer"):
  supported when it matches one of the question's gold triplets, else labelled *inference*;
  so is a claim the response states as a guess ("the person might be going to a market",
  ``JudgeReference.speculative``) that the graph cannot check, while a guess the graph
  contradicts stays a hallucination.

The question's gold triplets are part of the reference in their own wording too: an attribute
one of them says in its predicate or object ("(benches, mostly empty, platform)" says empty) and
a claim whose predicate and object words it spells out ("(people, wearing sports attire, ...)")
are supported. A count the question itself states ("What are the two horses doing?") is the
question's premise, which the answer repeats: supported, with the graph's own count in the reason.
A predicate that gives a reason ("flying because of the wind") is an inference.

Subjects and objects are grounded by ``hallu_studio.grounding.Grounder`` (lemma, synonym,
hypernym, embedding); an end that grounds nowhere is an object hallucination. Every verdict
carries a reason naming the nodes and edges it used.

Silence (``unverifiable``, the setting ``scoring.unverifiable``). A scene graph is read as
complete, as Tri-HE reads its graphs: what it does not hold is not there, and an attribute it does
not give counts as a hallucination ("scene-graph", the default; "hallucination" counts it against a
caption too, "ignore" never). A reference caption (DCI's) names the things in the picture but not
every attribute or relation of each: silence there is left out of the hallucinated share (and kept
in its denominator), while what the caption contradicts, and things it never names, still count.

Verdicts (``judges.base.VERDICTS``): supported, object, relation, unverifiable, inference.
A count error is an *object* hallucination (an object that is not there, or one too few);
an attribute conflict a *relation* one (Tri-HE stores attributes as ``(o, is, a)`` triplets).

Worked example. Graph: dog (brown) on sofa. Claims: (dog, on, couch) → supported (couch is
a synonym of sofa, edge "on"); (dog, under, sofa) → relation (edge "on" conflicts);
(dog, is, black) → relation (graph says brown); (dog, is, two) → object (one dog);
(cat, on, sofa) → object (no node for cat).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..grounding import (Edge, Grounder, Match, ReferenceGraph, attribute_support, counted, edge_support,
                         fold_preposition, instances_fitting)
from ..lexicon.attributes import attribute_family, same_attribute, shares_scale
from ..lexicon.forms import count_of, normalize_name
from ..lexicon.nouns import is_visual_noun, relation as noun_relation
from ..lexicon.predicates import VISUAL_VERBS, Predicate, contradicts, entails, is_generic, parse_predicate
from ..lexicon.words import CAUSAL_WORDS, INFERENCE_PREDICATES
from ..vectors import PhraseEncoder, unit_rows
from ..config import UNVERIFIABLE_POLICIES
from .base import (EXISTENCE_OBJECT, EXISTENCE_PREDICATE, JudgeReference, Triplet, TripletJudgement,
                   triplet_text)
from .claim_wording import (edge_text, gold_spelling, is_visual, named_instead, said_by, says_attribute,
                            states_count)

_SEEN_FAMILIES = frozenset({"colour", "material", "shape", "pattern"})
_COPULA = Predicate(None, None)


class SceneGraphAlignmentJudge:
    name = "graph"
    judges_existence = True  # "(giraffe, is in, the image)" claims are checked (metrics.trihe.response_claims)

    def __init__(self, encoder: PhraseEncoder | None = None, *, model_name: str = "",
                 grounding_threshold: float = 0.8, gold_threshold: float = 0.8,
                 unverifiable: str = "scene-graph", unverifiable_weight: float = 0.1) -> None:
        if unverifiable not in UNVERIFIABLE_POLICIES:
            raise ValueError(f"unverifiable must be one of {UNVERIFIABLE_POLICIES}, got {unverifiable!r}")
        if not 0 <= unverifiable_weight <= 1:
            raise ValueError(f"unverifiable_weight must be between 0 and 1, got {unverifiable_weight!r}")
        self.unverifiable_weight = unverifiable_weight
        self.encoder = encoder
        self.model_name = model_name or (getattr(encoder, "model_name", type(encoder).__name__) if encoder else "")
        self.grounder = Grounder(encoder, grounding_threshold)
        self.gold_threshold = gold_threshold
        self.unverifiable = unverifiable

    def config(self) -> dict[str, Any]:
        return {"judge": self.name, "version": 3, "model": self.model_name or None, **self.grounder.config(),
                "gold_threshold": self.gold_threshold, "unverifiable": self.unverifiable,
                "unverifiable_weight": self.unverifiable_weight}

    def counts_as_hallucination(self, verdict: str, closed: bool = True) -> bool:
        """Whether a verdict counts whole as a hallucination (``hallucination_weight`` 1)."""
        return self.hallucination_weight(verdict, closed) >= 1.0

    def hallucination_weight(self, verdict: str, closed: bool = True) -> float:
        """How much of a hallucination a verdict counts as against a reference that is complete (``closed``: a
        scene graph) or open-world (captions, an object list): object and relation hallucinations 1; silence as
        the policy says (module docstring, "Silence"): 1 against a scene graph, ``unverifiable_weight`` against
        open references (scene-graph), 1 (hallucination) or 0 (ignore) always; anything else 0."""
        if verdict != "unverifiable":
            return 1.0 if verdict in ("object", "relation") else 0.0
        if self.unverifiable == "scene-graph":
            return 1.0 if closed else self.unverifiable_weight
        return 1.0 if self.unverifiable == "hallucination" else 0.0

    def _counted(self, reference: JudgeReference) -> str:
        """What a reason says of an unverifiable verdict's counting."""
        weight = self.hallucination_weight("unverifiable", reference.scope.closed)
        if weight >= 1.0:
            return "; counted as a hallucination, as the paper does"
        if weight == 0.0:
            return ("; not counted" if self.unverifiable == "ignore" else
                    "; not counted: captions and object lists are no complete graph")
        return f"; counted as {weight:g} of a hallucination (scoring.unverifiable_weight)"

    def warm(self, batches: Sequence[tuple[Sequence[Triplet], JudgeReference]]) -> None:
        """Encode every name the embedding fallback may compare, in one call."""
        if self.encoder is None:
            return
        phrases: dict[str, None] = {}
        for claims, reference in batches:
            for s, _, o in claims:
                phrases.update(dict.fromkeys((normalize_name(s) or s, normalize_name(o) or o)))
            phrases.update(dict.fromkeys(normalize_name(n) or n for n in reference.nodes()))
            if reference.gold:  # a claim's sentence is compared with gold triplets only (``_gold_support``)
                phrases.update(dict.fromkeys(triplet_text(t) for t in list(claims) + list(reference.gold)))
        phrases.pop("", None)
        if phrases:
            self.encoder.encode(list(phrases))

    # ------------------------------------------------------------------ the checks

    def judge(self, claims: Sequence[Triplet], reference: JudgeReference) -> list[TripletJudgement]:
        if not claims:
            return []
        graph = (ReferenceGraph.from_scene_graph(reference.graph) if reference.graph is not None
                 else ReferenceGraph.from_triplets(reference.objects, reference.triplets, counts=reference.counts))
        for name in reference.listed:
            graph.node_index(name)  # in the picture, how many unknown (multiplicity 0)
        graph.scope = reference.scope
        quals = list(reference.qualifiers) + [((), ())] * (len(claims) - len(reference.qualifiers))
        # The nodes the response names anywhere: a reference thing it never names may be what it replaced.
        mentioned = {m.index for c in claims for end in (c[0], c[2]) for m in self.grounder.ground(end, graph)}
        out = [self._one(tuple(c), graph, reference, q, mentioned)  # type: ignore[arg-type]
               for c, q in zip(claims, quals)]
        out = self._one_instance_per_sentence(claims, out, graph, reference)
        return [self._as_guess(j) if i in reference.speculative else j for i, j in enumerate(out)]

    def _one_instance_per_sentence(self, claims: Sequence[Triplet], out: list[TripletJudgement], graph: ReferenceGraph,
                                   reference: JudgeReference) -> list[TripletJudgement]:
        """Attributes one sentence gives one name ("the sphere is little, red and metal") describe one object.

        Where the graph has several objects of that name, each attribute is true of *some* of them;
        the sentence's attributes are checked against the one object that fits most of them, and an
        attribute that object contradicts is a hallucination.
        """
        if len(reference.sentences) != len(claims):
            return out
        groups: dict[tuple[int, str], list[int]] = {}
        # Adjectives that say which end of a relation is meant ("the red cube is left of the blue cube") describe
        # two objects of one name, not one: the relation's check uses them.
        naming = {(sentence, normalize_name(end), a) for (s, _, o), q, sentence in
                  zip(claims, reference.qualifiers, reference.sentences) for end, attrs in zip((s, o), q) for a in attrs}
        for i, (j, sentence) in enumerate(zip(out, reference.sentences)):
            if (sentence, normalize_name(claims[i][0]), claims[i][2]) in naming:
                continue
            if sentence >= 0 and j.kind == "attribute" and j.verdict in ("supported", "relation", "unverifiable"):
                groups.setdefault((sentence, normalize_name(claims[i][0])), []).append(i)
        for (_, name), members in groups.items():
            nodes = [graph.nodes[m.index] for m in self.grounder.ground(name, graph)]
            instances = [inst for node in nodes for inst in node.instances]
            if len(members) < 2 or len(instances) < 2:
                continue
            attrs = [claims[i][2] for i in members]
            fit = max(instances, key=lambda inst: sum(any(same_attribute(a, h) for h in inst) for a in attrs))
            for i, a in zip(members, attrs):
                if out[i].verdict != "supported" or any(same_attribute(a, h) for h in fit):
                    continue
                clash = [h for h in sorted(fit) if shares_scale(a, h)]
                if clash:
                    out[i] = TripletJudgement(out[i].triplet, "relation", 0.0, (
                        f"conflicts with the graph: the {name} this sentence describes (the one that is "
                        f"{', '.join(sorted(x for x in fit if any(same_attribute(y, x) for y in attrs)))}) is "
                        f"{', '.join(repr(h) for h in clash)}, though another {name} is {a!r}"), kind="attribute")
        return out

    @staticmethod
    def _as_guess(j: TripletJudgement) -> TripletJudgement:
        """A claim the response states as a guess ("might be going to a market") is an inference when the
        graph cannot check it (an end it does not hold, no edge, silence); a guess the graph contradicts
        (a conflicting edge or attribute, a wrong count) stays a hallucination."""
        unchecked = j.verdict in ("object", "unverifiable") and j.kind != "count" or (
            j.verdict == "relation" and j.reason.startswith("no edge")) or (
            # A guessed relation no picture shows ("fascinated by", "playing with"): the edge it meets
            # says what is seen, not that the guess is wrong.
            j.verdict == "relation" and j.kind == "relation" and not is_visual(parse_predicate(j.triplet[1])))
        if not unchecked:
            return j
        return TripletJudgement(j.triplet, "inference", j.score, f"stated as a guess, and the graph cannot check it "
                                f"({j.reason})", kind="inference")

    def _one(self, claim: Triplet, graph: ReferenceGraph, reference: JudgeReference,
             qualifiers: tuple[tuple[str, ...], tuple[str, ...]] = ((), ()),
             mentioned: frozenset[int] | set[int] = frozenset()) -> TripletJudgement:
        s, p, o = (part.strip() for part in claim)
        if (p, o) == (EXISTENCE_PREDICATE, EXISTENCE_OBJECT):
            return self._exists(claim, s, graph, reference)
        p, o = fold_preposition(p, o)
        pred = parse_predicate(p)
        if self._is_inference(s, p, pred, o, lambda name: any(m.how in ("lemma", "synonym")
                                                              for m in self.grounder.ground(name, graph))):
            subjects, objects = self.grounder.ground(s, graph), self.grounder.ground(o, graph)
            if subjects and objects and not pred.copula:
                support = edge_support(graph, [m.index for m in subjects], pred, [m.index for m in objects])
                if support.edge is not None:
                    return self._supported(claim, f"edge {edge_text(graph, support.edge)}", subjects, objects)
            gold = self._gold_match(claim, reference)
            if gold:
                return TripletJudgement(claim, "supported", 1.0, f"an inference that matches the question's gold "
                                        f"triplet {gold}", kind="inference")
            return TripletJudgement(claim, "inference", None, "a claim about what is not seen (non-visual predicate "
                                    "or noun), and no gold triplet of the question says it", kind="inference")
        subjects = self.grounder.ground(s, graph)
        if not subjects:
            return self._absent(claim, "subject", s, graph, reference)
        if pred.copula:
            n = count_of(o)
            if n is not None:
                return self._count(claim, subjects, n, reference)
            compound = normalize_name(f"{o} {s}")
            named = [node for node in graph.nodes if node.name == compound]
            if named:
                # "outer petals" split into (petal, is, outer): the graph names the thing with the modifier.
                return TripletJudgement(claim, "supported", 1.0, f"the graph has a node named "
                                        f"{named[0].labels[0] if named[0].labels else compound!r}", kind="attribute")
            # "is" alone: an attribute, or a kind ("the animal is a dog") when it names the same node.
            objects = self.grounder.ground(o, graph) if attribute_family(o) is None else []
            if objects and {m.index for m in objects} & {m.index for m in subjects}:
                return TripletJudgement(claim, "supported", 1.0, f"{o!r} names the same node as {s!r}: "
                                        f"{objects[0].describe()}", kind="attribute")
            return self._attribute(claim, subjects, o, reference)
        named = graph.names_relation(s, p, o)
        if named is not None:
            return TripletJudgement(claim, "supported", 1.0, f"the graph has a node named "
                                    f"{named.labels[0] if named.labels else named.name!r}", kind="relation")
        objects = self.grounder.ground(o, graph)
        if not objects:
            spelled = gold_spelling(claim, reference)
            if spelled:
                return TripletJudgement(claim, "supported", 1.0, f"the question's gold triplet {spelled} says it in "
                                        "its own words", kind="relation")
            instead = None if graph.scope.objects else named_instead(graph, subjects, pred, o, mentioned)
            return self._absent(claim, "object", o, graph, reference, instead)
        return self._relation(claim, subjects, pred, objects, graph, reference, qualifiers)

    @staticmethod
    def _is_inference(s: str, p: str, pred: Predicate, o: str, held: Callable[[str], bool]) -> bool:
        """Whether a claim is about what is not seen: an inferring or causal predicate, or an end no one can see.
        ``held(name)``: whether the reference holds that very noun (by lemma or synonym; a kind of it or an
        embedding neighbour says nothing of it) as a thing in the picture."""
        words = p.lower().split()
        if p.lower().strip() in INFERENCE_PREDICATES or (pred.verb and pred.verb in INFERENCE_PREDICATES):
            return True
        if any(w in INFERENCE_PREDICATES for w in words[:1]) or CAUSAL_WORDS & set(words):
            return True
        # A colour, material, shape or pattern is only had by a thing one sees: "the sign is gray" is about a
        # signboard, though "sign" is first a token of something (WordNet's first senses are all communication).
        if pred.copula and attribute_family(o) in _SEEN_FAMILIES:
            return False
        # A noun no one can see ("quality", "likelihood", "summer") at either end; attributes are judged as such. A
        # noun the reference holds is a thing in the picture, whatever WordNet's first senses say ("the word under
        # the sweatshirt", "the water under the flame", "the sign on the wall").
        return any(is_visual_noun(x) is False and attribute_family(x) is None and count_of(x) is None and not held(x)
                   for x in (s, o) if not pred.copula or x is s)

    def _exists(self, claim: Triplet, name: str, graph: ReferenceGraph,
                reference: JudgeReference) -> TripletJudgement:
        """ "There is a giraffe": the object must ground to a node; a noun no one sees is an inference."""
        found = self.grounder.ground(name, graph)
        if found:
            return TripletJudgement(claim, "supported", 1.0, f"the {'graph' if graph.scope.closed else 'reference'} "
                                    f"has {found[0].describe()}", kind="object")
        listed = graph.scope.presence(name)
        if listed:
            return TripletJudgement(claim, "supported", 1.0, f"the image's object list holds {listed!r}", kind="object")
        if is_visual_noun(name) is False:
            return TripletJudgement(claim, "inference", None, f"{name!r} is not a thing one sees", kind="inference")
        return self._absent(claim, "object", name, graph, reference)

    def _absent(self, claim: Triplet, role: str, name: str, graph: ReferenceGraph,
                reference: JudgeReference, instead: Edge | None = None) -> TripletJudgement:
        """A claim whose ``role`` end grounds nowhere: an object hallucination where the reference settles that
        the thing is not there (a complete graph; an object list's vocabulary; ``instead``, an edge of the
        references that puts another thing, which the response never names, in that place), else unverifiable."""
        near = self.grounder.nearest(name, graph)
        closest = f"; nearest node {near[0]!r} at cosine {near[1]:.2f}" if near else ""
        if graph.scope.objects:
            return TripletJudgement(claim, "object", None, f"{role} {name!r} matches no node of the graph by lemma, "
                                    f"synonym or hypernym{closest}", kind="object")
        absent = graph.scope.absence(name)
        if absent:
            return TripletJudgement(claim, "object", 0.0, f"{role} {name!r} is not in the picture: {absent}",
                                    kind="object")
        if instead is not None:
            other = graph.nodes[instead.object]
            return TripletJudgement(claim, "object", 0.0, f"{role} {name!r} takes the place of "
                                    f"{other.labels[0] if other.labels else other.name!r}, which the references "
                                    f"put there ({edge_text(graph, instead)}) and the response never names",
                                    kind="object")
        return TripletJudgement(claim, "unverifiable", None, f"unverifiable: the references do not mention "
                                f"{name!r}{closest}, and cannot say it is not there{self._counted(reference)}",
                                kind="object")

    def _count(self, claim: Triplet, subjects: list[Match], n: int, reference: JudgeReference) -> TripletJudgement:
        m = counted(subjects)
        nodes = ", ".join(x.describe() for x in subjects)
        if m != n and states_count(reference.question, claim[0], n):
            # "What are the two people about to do?" -> "The two people are ...": the answer repeats the
            # question's premise; where the graph lists another number, it is the graph's count against the
            # question's, not a number the answer made up (GQA graphs often list one node for two people).
            return TripletJudgement(claim, "supported", 1.0, f"the question itself says {n} ({claim[0]!r}); the "
                                    f"answer repeats its premise (the graph has {m} of {nodes})", kind="count")
        if not reference.scope.details:
            # Open-world references count only what they give a number for ("two cows"); "a cow" in one caption
            # says nothing of how many there are, and "one player" is seldom a total ("one of them").
            stated = [x for x in subjects if x.node.name in reference.counts]
            m = counted(stated)
            if not stated or (n == 1 and m > 1):
                return TripletJudgement(claim, "unverifiable", None, f"unverifiable: the references "
                                        f"{'give no number for ' + nodes if not stated else 'say ' + str(m)}"
                                        f"{self._counted(reference)}", kind="count")
        if m == 0:
            return TripletJudgement(claim, "unverifiable", None, f"the graph does not say how many of {nodes} there "
                                    "are", kind="count")
        if m == n:
            return TripletJudgement(claim, "supported", 1.0, f"the graph has {m} of {nodes}", kind="count")
        return TripletJudgement(claim, "object", 0.0, f"the response says {n}, the graph has {m} of {nodes}",
                                kind="count")

    def _attribute(self, claim: Triplet, subjects: list[Match], attr: str,
                   reference: JudgeReference) -> TripletJudgement:
        support = attribute_support(subjects, attr)
        held, agreeing, conflicting = support.held, support.agreeing, support.conflicting
        nodes = ", ".join(m.describe() for m in subjects)
        if agreeing:
            return TripletJudgement(claim, "supported", 1.0, f"{nodes} is {agreeing[0]!r} in the graph",
                                    kind="attribute")
        gold = [t for t in reference.gold if noun_relation(claim[0], t[0]) and (
            same_attribute(attr, t[2]) or says_attribute(attr, t[1], t[2]))]
        # "the lambs are the small sheep" -> (sheep, small): the gold triplet's object names the thing with it.
        gold += [t for t in reference.gold if says_attribute(attr, "", t[2]) and
                 normalize_name(t[2]).split()[-1:] == normalize_name(claim[0]).split()[-1:]]
        if gold:
            return TripletJudgement(claim, "supported", 1.0, f"the question's gold triplet {gold[0]} says so",
                                    kind="attribute")
        if conflicting:
            family = attribute_family(attr) or "attribute"
            return TripletJudgement(claim, "relation", 0.0, f"conflicts with the graph: {nodes} is "
                                    f"{', '.join(repr(a) for a in conflicting)} ({family})", kind="attribute")
        family = attribute_family(attr)
        if family is None:
            # Outside every visual family ("calm", "ready", "appropriate"): a judgement about the thing, which no
            # scene graph holds; the graph lists no such attribute for it either.
            listed = f" (it has {', '.join(held)})" if held else ""
            return TripletJudgement(claim, "inference", None, f"{attr!r} is no colour, material, size, shape, count, "
                                    f"state or pattern, and the graph gives {nodes} no such attribute{listed}",
                                    kind="inference")
        return TripletJudgement(claim, "unverifiable", None, f"unverifiable: the {said_by(reference)} says nothing "
                                f"of the {family} of {nodes}{self._counted(reference)}", kind="attribute")

    def _relation(self, claim: Triplet, subjects: list[Match], pred: Predicate, objects: list[Match],
                  graph: ReferenceGraph, reference: JudgeReference,
                  qualifiers: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())) -> TripletJudgement:
        # "the red cube is left of the blue cube": only edges between a red cube and a blue one count.
        meant = instances_fitting(subjects, qualifiers[0]), instances_fitting(objects, qualifiers[1])
        support = edge_support(graph, [m.index for m in subjects], pred, [m.index for m in objects], *meant)
        if support.edge is not None:
            way = ", the other way round" if support.the_other_way else ""
            return self._supported(claim, f"edge {edge_text(graph, support.edge)}{way}", subjects, objects)
        gold = self._gold_match(claim, reference, strict=True) or gold_spelling(claim, reference)
        if gold:
            return TripletJudgement(claim, "supported", 1.0, f"matches the question's gold triplet {gold}",
                                    kind="relation")
        said = [f"the {' '.join(q)} one" if q and meant[k] else "" for k, q in enumerate(qualifiers)]
        ends = (f"{', '.join(m.describe() for m in subjects)}{' (' + said[0] + ')' if said[0] else ''} and "
                f"{', '.join(m.describe() for m in objects)}{' (' + said[1] + ')' if said[1] else ''}")
        if not graph.scope.details:
            # Open-world references relate two things in some ways, not in every way that holds: only the contrary
            # place ("under" for "on") contradicts a claim; another relation ("next to" for "in front of") does not.
            s_idx, o_idx = {m.index for m in subjects}, {m.index for m in objects}
            contrary = [e for e in support.between if (e.subject in s_idx and contradicts(e.predicate, pred))
                        or (e.subject in o_idx and contradicts(e.predicate, pred, the_other_way=True))]
            if contrary:
                edges = "; ".join(edge_text(graph, e) for e in contrary)
                return TripletJudgement(claim, "relation", 0.0, f"contradicts the references: between {ends} they "
                                        f"say {edges}, the contrary of {pred.text()!r}", kind="relation")
            other = (f"they relate them otherwise ({'; '.join(edge_text(graph, e) for e in support.between)})"
                     if support.between else "they do not say how they relate")
            return TripletJudgement(claim, "unverifiable", None, f"unverifiable: the references name {ends}, and "
                                    f"{other}{self._counted(reference)}", kind="relation")
        # An edge that only joins the two ("person with helmet") says nothing against how the claim relates them.
        joined = f" says {pred.text()!r}; it only has {edge_text(graph, support.between[0])}" \
            if support.between and all(is_generic(e.predicate) for e in support.between) else ""
        if support.between and not joined:
            edges = "; ".join(edge_text(graph, e) for e in support.between)
            return TripletJudgement(claim, "relation", 0.0, f"conflicting edge: between {ends} the graph has "
                                    f"{edges}, not {pred.text()!r}", kind="relation")
        return TripletJudgement(claim, "relation", 0.0, f"no edge between {ends} in the graph{joined}",
                                kind="relation")

    @staticmethod
    def _supported(claim: Triplet, why: str, subjects: list[Match], objects: list[Match]) -> TripletJudgement:
        return TripletJudgement(claim, "supported", 1.0, f"{why}; subject {subjects[0].describe()}, object "
                                f"{objects[0].describe()}", kind="relation")

    def _gold_match(self, claim: Triplet, reference: JudgeReference, *, strict: bool = False) -> str | None:
        """The gold triplet of the question that says what ``claim`` says, as text, or None.

        Same (or more general) subject and an object that shares its head noun or grounds the same
        way, and a predicate the gold one does not contradict: with ``strict`` (a visual relation) the
        gold predicate must entail the claim's; otherwise a visual predicate of the claim that the gold
        one does not entail rules it out too. Failing that, cosine of the triplet texts at or above
        ``gold_threshold`` (not with ``strict``).
        """
        if not reference.gold:
            return None
        s, p, o = claim
        pred = parse_predicate(p)
        visual = strict or pred.prep is not None or (pred.verb is not None and pred.verb in VISUAL_VERBS)
        o_norm = normalize_name(o)
        for gs, gp, go in reference.gold:
            if noun_relation(s, gs) not in ("same", "general"):
                continue
            g_words = set(normalize_name(go).split()) | set(go.lower().split())
            if not (o_norm and (o_norm in g_words or o_norm.rsplit(" ", 1)[-1] in g_words or
                                noun_relation(o, go) in ("same", "general"))):
                continue
            if visual and not entails(parse_predicate(gp), pred):
                continue
            return f"({gs}, {gp}, {go})"
        if self.encoder is None or strict:
            return None
        texts = [triplet_text(claim)] + [triplet_text(t) for t in reference.gold]
        vecs = unit_rows(self.encoder.encode(texts))
        sims = vecs[1:] @ vecs[0]
        best = int(np.argmax(sims))
        if sims[best] >= self.gold_threshold:
            gs, gp, go = reference.gold[best]
            if visual and not entails(parse_predicate(gp), pred):
                return None
            return f"({gs}, {gp}, {go}) at cosine {sims[best]:.2f}"
        return None
