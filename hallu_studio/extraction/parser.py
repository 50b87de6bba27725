"""Offline concept extraction: SceneGraphParser on spaCy, plus repairs for dense and short captions.

SceneGraphParser (``sng_parser``) finds entities (noun chunks) and the relations between them
from spaCy's dependency parse. On real LVLM dense captions and short COCO-style captions it has known
failure modes, each repaired here on the same parse.

Before SceneGraphParser reads it, ``tree_repairs`` mends the tree where spaCy's small model reads a short
caption as one long noun phrase (rules 12):

* verbs glued into a noun compound get their clause back: "Sheep graze in a field" -> (sheep, graze in,
  field), not the object ``sheep graze``; "A boy and his dog herd goats" -> (boy, herd, goat), (dog, herd,
  goat); "A truck and a taxi stop at the stop sign"; "A woman in a striped shirt smiles at the camera";
* a participle and its object are a relation: "an elephant drinking water" -> (elephant, drinking, water),
  not the object ``drinking water`` (which stays one where nobody drinks: "a glass of drinking water");
* a noun read as the root verb is a noun: "A small moped parked on a dirt road", "Street signs on a pole".

Then, on the tree:

* framing words ("image", "scene", "background" ...) and pronouns ("it", "which") are not objects
  (spaCy 3 no longer lemmatises pronouns to ``-PRON-``, so the parser's own filter is inert);
* collective nouns ("a group of people") give way to the noun after "of";
* predicative adjectives become attributes ("the column is intricately carved" -> (column, carved));
* participle and passive relations keep their verb ("topped with", "surrounded by");
* copular prepositions become relations ("the cat is on the table" -> (cat, on, table));
* hyphenated words stay whole ("multi-tiered" is one attribute; see ``spacy_pipeline``);
* hedged appositives ("people in water, likely a river or a stream") give alternative objects
  (river, stream) but no relations, and "a remote or a phone" gives both objects;
* colour words used as nouns ("a silver Nissan", "on the blue"), activities ("walking",
  "relaxing") and fractions ("half of the pizza") are not objects; a gerund after a compound
  ("a woven mat hanging") gives way to the compound;
* a compound noun is one object where the small model splits it: "a kite and a fire hydrant" hangs
  "hydrant" on "fire" as a modifier (``compound_tail``), "a trash can are" and "the trash can is white"
  read "can" as an auxiliary (WordNet lists "trash can" as one noun; the colour stays on it), "an oven mitt"
  tags "oven" as an adjective (WordNet knows it only as a noun), and "I see a toaster, a stop sign and a
  chair" leaves "sign" outside every chunk; a participle is never a compound's second word ("a dog
  staring", "a car parked": spaCy's lemmas "star", "park" would make "dog star", "car park");
* an adjective that WordNet lists with its noun as one noun of another kind is part of the name: "a hot
  dog" is ``hot dog`` (not a dog that is hot, and not the dog next to it), "a remote control", "a light
  bulb", "the living room"; an adjective that names a kind of its noun ("electric guitar", "polar bear"),
  a position ("right hand"), a participle ("fried egg") or a word of the attribute families stays an
  attribute;
* object names go through the lexicon's ``normalize_name`` (singular head, plural-only nouns kept);
* inferences stay claims (Tri-HE Appendix C counts them): "a car used for transportation" ->
  (car, used for, transportation) and "the people engaged in surfing" -> (people, engaged in,
  surfing) although neither transportation nor surfing is an object; "it is probably summer" ->
  (scene, is probably, summer), whose predicate is one of the lexicon's inference predicates.

Number is not an attribute: "two dogs" gives one object ``dog`` (as an LLM lists entity words)
and a count ``CountConcept("dog", 2)`` whose span is the word "two" alone; "two pairs of
glasses" counts the glasses, "a pair of glasses" gives no count. "a" counts as one only in a
list that counts other things ("two dogs, a cat and three birds"). Counting words without a
number ("several") are dropped. Each concept is reported once per response.

>>> ex = ParserExtractor()
>>> ex.extract(["A fountain topped with a statue."])[0].to_dict()
{'objects': ['fountain', 'statue'], 'attributes': [], 'relations': [['fountain', 'topped with', 'statue']]}
>>> counted = ex.extract(["Two dogs are sleeping on a sofa."])[0]
>>> counted.counts, counted.to_dict()["counts"]
([CountConcept(object='dog', count=2, span=(0, 3))], [['dog', 2]])
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Sequence

from ..lexicon.attributes import attribute_family
from ..lexicon.nouns import is_colour_noun
from ..lexicon.words import NON_ATTRIBUTES, NON_PREDICATES, RELATIVE_PRONOUNS
from ..model import AttributeConcept, ConceptSet, ObjectConcept, RelationConcept
from .spacy_pipeline import installed_model_name, load_english, loaded_model_name
from .token_rules import (NOUN_SLOTS, PLACE_NOUNS, Mention, char_span, compound_tail, compound_tokens, conjuncts,
                          count_concepts, dedupe, describes, drop_negated, has_prep_object, is_activity,
                          is_claim_end, is_hedged, is_inference, is_thing, lexical_compound, object_name, qualifiers,
                          scene_claim_relations)
from .tree_repairs import repair_tree

# Bump when the rules below change: extracted concepts (and the scores built on them) change too.
RULES_VERSION = "12"
COPULAS = frozenset({"be", "seem", "appear", "look", "remain", "become"})


class _PreParsed:
    """Stands in for ``spacy.Language`` inside sng_parser, so a batch parsed with ``nlp.pipe``
    is not parsed a second time."""

    def __init__(self, doc: Any) -> None:
        self.doc = doc

    def __call__(self, text: str) -> Any:
        return self.doc


def _sng_parse(doc: Any) -> dict[str, Any]:
    import sng_parser.backends  # noqa: F401 - registers the spaCy backend
    from sng_parser.parser import Parser

    # The registering decorator returns None, so the class is only reachable through the registry.
    backend = Parser._backend_registry["spacy"]
    parser = backend.__new__(backend)  # skip __init__: it would load a second spaCy model
    parser.nlp = _PreParsed(doc)
    return parser.parse(doc.text)


class ParserExtractor:
    """The offline default extractor: SceneGraphParser on spaCy's small English pipeline.

    Parses are batched with ``nlp.pipe`` and each text's concepts cached in-process.
    """

    name = "parser"

    def __init__(self, model: str | None = None, *, batch_size: int = 64, cache_size: int = 200_000) -> None:
        self.model = model
        self.batch_size = batch_size
        self.cache_size = cache_size
        self._cache: OrderedDict[str, ConceptSet] = OrderedDict()
        self._lock = threading.Lock()
        self._nlp: Any = None

    @property
    def nlp(self) -> Any:
        if self._nlp is None:
            self._nlp = load_english(self.model)
        return self._nlp

    def config(self) -> dict[str, Any]:
        # The installed model's name, read without loading spaCy while the parser has not been used yet.
        name = loaded_model_name(self._nlp) if self._nlp is not None else installed_model_name(self.model)
        return {"extractor": self.name, "spacy_model": name or loaded_model_name(self.nlp), "rules": RULES_VERSION}

    def extract(self, texts: Sequence[str]) -> list[ConceptSet]:
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"text {i} is {type(text).__name__}, not str")
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            parsed = {text: self._concepts(doc) for text, doc in
                      zip(missing, self.nlp.pipe(missing, batch_size=self.batch_size))}
            with self._lock:
                self._cache.update(parsed)
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        with self._lock:
            return [self._cache[t] if t in self._cache else self._concepts(self.nlp(t)) for t in texts]

    def extract_one(self, text: str) -> ConceptSet:
        return self.extract([text])[0]

    # ------------------------------------------------------------------ rules

    def _concepts(self, doc: Any) -> ConceptSet:
        if not doc.text.strip():
            return ConceptSet()
        repair_tree(doc)
        graph = _sng_parse(doc)
        mentions = self._mentions(doc, graph)
        scene_claims = scene_claim_relations(doc)
        # "it might be early fall": the fall is what the picture is claimed to show, not a thing in it.
        claimed = {i for i, _ in scene_claims}
        for m in mentions:
            m.listed = m.listed and m.root not in claimed
        by_root = {i: m for m in mentions for i in (m.root, *m.aliases)}
        things = {i: m for i, m in by_root.items() if m.listed}
        attributes = self._attributes(doc, things)
        relations = self._relations(doc, graph, by_root) + [c for _, c in scene_claims]
        return dedupe(
            [ObjectConcept(m.name, m.span) for m in mentions if m.listed],
            attributes,
            relations,
            count_concepts(doc, [m for m in mentions if m.listed]),
        )

    def _mentions(self, doc: Any, graph: dict[str, Any]) -> list[Mention]:
        roots: list[Any] = []
        for ent in graph["entities"]:
            start, end = ent["span_bounds"]
            roots.append(doc[start:end].root)
        # spaCy's small model tags some nouns after "or" as conjuncts without a chunk: add them.
        seen = {r.i for r in roots}
        for r in list(roots):
            for c in conjuncts(r)[1:]:
                if c.i not in seen and c.pos_ in ("NOUN", "PROPN"):
                    roots.append(c)
                    seen.add(c.i)
        # ... and tags some nouns as adjectives ("there is a remote"), or as modifiers of the next item in a
        # list ("a cone, two cylinders"): a determiner gives them away.
        for token in doc:
            if token.i not in seen and ((token.pos_ == "ADJ" and token.dep_ in NOUN_SLOTS and
                                         any(c.dep_ == "det" for c in token.children)) or
                                        (token.pos_ == "NOUN" and token.dep_ == "nmod" and
                                         token.i > 0 and doc[token.i - 1].pos_ == "DET") or
                                        # "I see a toaster, a stop sign and a chair": "sign" left as "dep"
                                        # outside every noun chunk, and its conjuncts with it. (Not ROOT:
                                        # "the hallway curves to the left" is a verb read as a noun.)
                                        (token.pos_ == "NOUN" and token.dep_ == "dep" and
                                         any(c.dep_ == "det" for c in token.children))):
                roots.append(token)
                seen.add(token.i)
                for c in conjuncts(token)[1:]:
                    if c.i not in seen and c.pos_ in ("NOUN", "PROPN"):
                        roots.append(c)
                        seen.add(c.i)
        out: list[Mention] = []
        absorbed: set[int] = set()  # tails of compounds named already ("hydrant" of "fire hydrant")
        for root in sorted(roots, key=lambda t: t.i):
            if root.i in absorbed:
                continue
            aliases: tuple[int, ...] = ()
            named = root
            # "a woven mat hanging": the gerund is what the mat does; the mat is the thing.
            if is_activity(root):
                compounds = [c for c in root.lefts if c.dep_ == "compound" and c.is_alpha]
                if compounds:
                    named, aliases = compounds[-1], (root.i,)
            # "a silver Nissan" parsed as the noun "silver" with "Nissan" beside it: the Nissan is silver.
            elif is_colour_noun(root.lower_):
                apposed = [c for c in root.children if c.dep_ == "appos" and c.pos_ in ("NOUN", "PROPN")]
                if apposed:
                    named, aliases = apposed[0], (root.i,)
            tail = compound_tail(named)
            if tail is not None:
                absorbed.add(tail.i)
                aliases += (tail.i,)
            if is_thing(named):
                compounds = compound_tokens(named)
                out.append(Mention(root=named.i, name=object_name(named, tail),
                                    span=char_span(compounds + [named] + ([tail] if tail is not None else [])),
                                    hedged=is_hedged(named), aliases=aliases,
                                    tail=tail.i if tail is not None else None))
            elif is_claim_end(named):
                out.append(Mention(root=named.i, name=object_name(named), span=char_span([named]),
                                    hedged=is_hedged(named), listed=False))
        return out

    def _subject_mention(self, token: Any, by_root: dict[int, Mention]) -> list[Mention]:
        """Mentions that are the subject of a verb / copula / participle ``token``."""
        subjects: list[Any] = []
        if token.dep_ == "acl" or (token.dep_ == "relcl" and token.tag_ == "VBN" and
                                   not any(c.dep_ in ("nsubj", "nsubjpass") for c in token.children)):
            subjects = [token.head]
        else:
            for child in token.children:
                if child.dep_ in ("nsubj", "nsubjpass"):
                    subjects = [child]
            # "they are sitting and talking"; "the cars appear to be parked".
            if not subjects and token.dep_ in ("conj", "xcomp") and token.head.pos_ in ("VERB", "AUX"):
                return self._subject_mention(token.head, by_root)
        out: list[Mention] = []
        for subj in subjects:
            # "the table, which is wooden": the relative pronoun stands for the noun it follows.
            if subj.lower_ in RELATIVE_PRONOUNS and token.dep_ == "relcl":
                subj = token.head
            for s in conjuncts(subj):
                if s.i in by_root:
                    out.append(by_root[s.i])
        return out

    def _attributes(self, doc: Any, by_root: dict[int, Mention]) -> list[AttributeConcept]:
        out: list[AttributeConcept] = []
        tails = {m.tail for m in by_root.values() if m.tail is not None}

        def add(mention: Mention, word: Any) -> None:
            text = word.lower_.strip()
            if word.i in tails:  # part of a name ("hydrant" of "fire hydrant"), not a description
                return
            if not text or text in NON_ATTRIBUTES or word.like_num or not any(ch.isalpha() for ch in text):
                return
            if word.pos_ in ("DET", "PRON", "ADP", "NUM"):
                return
            # The attribute's own word: a judge that flags "brown" must not flag the "short" beside it.
            out.append(AttributeConcept(mention.name, text, char_span([word])))

        for root_i, mention in by_root.items():
            root = doc[root_i]
            if root_i != mention.root and is_colour_noun(root.lower_):
                add(mention, root)
            for child in root.children:
                if (child.dep_ == "amod" and not lexical_compound(child)) or \
                        (child.dep_ == "compound" and describes(child)):
                    for adj in conjuncts(child):
                        add(mention, adj)
            # "a car parked" (participle with nothing after it) describes the car.
            for child in root.children:
                if child.dep_ == "acl" and child.tag_ == "VBN" and not has_prep_object(child):
                    add(mention, child)
        for token in doc:
            # Predicative adjective: "the column is tall", "the table, which is wooden".
            if token.dep_ == "acomp" and token.pos_ in ("ADJ", "VERB"):
                for mention in self._subject_mention(token.head, by_root):
                    for adj in conjuncts(token):
                        add(mention, adj)
            # A colour or material as the complement: "the saucer is silver, oval and aluminium".
            elif token.dep_ == "attr" and token.head.lemma_.lower() in COPULAS and \
                    attribute_family(token.lower_) is not None:
                for mention in self._subject_mention(token.head, by_root):
                    for word in conjuncts(token):
                        if attribute_family(word.lower_) is not None or word.pos_ == "ADJ":
                            add(mention, word)
            # Passive participle with no object: "the column is intricately carved".
            elif token.tag_ == "VBN" and token.dep_ in ("ROOT", "conj", "ccomp", "relcl", "xcomp") and \
                    any(c.dep_ == "auxpass" for c in token.children) and not has_prep_object(token):
                for mention in self._subject_mention(token, by_root):
                    add(mention, token)
        # In the order of the text, so that ``dedupe`` keeps an attribute's first mention, not its first rule's.
        out.sort(key=lambda a: a.span or (0, 0))
        return out

    def _relations(self, doc: Any, graph: dict[str, Any], by_root: dict[int, Mention]) -> list[RelationConcept]:
        entity_roots = []
        for ent in graph["entities"]:
            start, end = ent["span_bounds"]
            entity_roots.append(doc[start:end].root.i)
        found: dict[tuple[int, int], tuple[str, list[Any]]] = {}
        for rel in graph["relations"]:
            s, o = entity_roots[rel["subject"]], entity_roots[rel["object"]]
            found.setdefault((s, o), (str(rel["relation"]).lower(), []))
        # Repairs: participle / passive / copular prepositional relations, on the same parse.
        for token in doc:
            self._repair_relation(doc, token, found, by_root)
        drop_negated(doc, found, lambda verb: self._subject_mention(verb, by_root))
        return self._relation_concepts(doc, found, by_root)

    def _repair_relation(self, doc: Any, token: Any, found: dict[tuple[int, int], tuple[str, list[Any]]],
                         by_root: dict[int, Mention]) -> None:
        """Repairs, at ``token`` (the object of a preposition, a mention's root), the relations sng_parser misses or
        misreads: participle, passive and copular prepositional ones, written into ``found``."""
        if token.dep_ != "pobj" or token.i not in by_root:
            return
        prep = token.head
        verb = prep.head
        place_noun = verb.dep_ == "pobj" and verb.lower_ in PLACE_NOUNS  # "on the left side of": see below
        if prep.dep_ == "prep" and verb.i in by_root and not place_noun:
            # "a remote or a phone on the table": a noun the parser did not chunk.
            for subject in conjuncts(verb):
                for obj in conjuncts(token):
                    if subject.i in by_root and obj.i in by_root and (subject.i, obj.i) not in found:
                        found[(subject.i, obj.i)] = (prep.lower_, [prep])
            return
        if prep.dep_ == "prep" and verb.pos_ in ("ADJ", "ADV") and verb.head.lemma_.lower() in COPULAS:
            # "The flag is right of the astronaut", "is next to": a two-word preposition led by an adverb.
            predicate = f"{verb.lower_} {prep.lower_}"
            placed = [g for c in verb.children if c.dep_ == "prep" and c.i < prep.i
                      for g in c.children if g.dep_ == "pobj" and g.i in by_root]
            if placed:
                # "close to the person with a surfboard": a second phrase describes the first one's object.
                for obj in conjuncts(token):
                    if obj.i in by_root and placed[-1].i != obj.i:
                        found.setdefault((placed[-1].i, obj.i), (prep.lower_, [prep]))
                return
            for subject in self._subject_mention(verb.head, by_root):
                for obj in conjuncts(token):
                    if obj.i in by_root and subject.root != obj.i:
                        found.setdefault((subject.root, obj.i), (predicate, [verb, prep]))
            return
        if (prep.dep_ == "prep" and verb.dep_ == "pobj" and verb.lower_ in PLACE_NOUNS
                and verb.head.dep_ == "prep" and verb.head.head.pos_ in ("VERB", "AUX")):
            # "is in front of the car", "sits on top of the box": a preposition of three words.
            predicate = " ".join(t.lower_ for t in doc[verb.head.i:prep.i + 1] if t.pos_ != "DET")
            for subject in self._subject_mention(verb.head.head, by_root):
                for obj in conjuncts(token):
                    if obj.i in by_root and subject.root != obj.i:
                        found.setdefault((subject.root, obj.i), (predicate, [verb.head, verb, prep]))
            return
        # "hikes up a trail": spaCy makes "up" a particle that holds the object.
        if prep.dep_ not in ("prep", "agent", "prt") or verb.pos_ not in ("VERB", "AUX"):
            return
        lemma = verb.lemma_.lower()
        active = False
        if verb.tag_ == "VBN" or prep.dep_ == "agent":
            predicate = f"{verb.lower_} {prep.lower_}"
        elif lemma in COPULAS:
            predicate = prep.lower_
        elif any(c.dep_ == "dobj" for c in verb.children):
            # "has a stick in his hand", "facing the person on the skateboard": the preposition places the
            # verb's object, not its subject (sng_parser pairs the subject with it). "with" is left alone:
            # it is often the verb's instrument ("hits the ball with a racket").
            if prep.lower_ != "with":
                self._place_object(verb, prep, token, found, by_root)
            return
        else:
            # sng_parser finds active verbs but keeps only the preposition ("standing on" -> "on").
            predicate, active = f"{verb.lower_} {prep.lower_}", True
        negated = any(c.dep_ == "neg" for c in verb.children)
        for subject in self._subject_mention(verb, by_root):
            for obj in conjuncts(token):
                if obj.i in by_root and subject.root != obj.i:
                    key = (subject.root, obj.i)
                    if negated:  # "may not be engaging with the women" claims no relation
                        found.pop(key, None)
                    elif not active or found.get(key, (prep.lower_,))[0] == prep.lower_:
                        found[key] = (predicate, [verb, prep])

    @staticmethod
    def _relation_concepts(doc: Any, found: dict[tuple[int, int], tuple[str, list[Any]]],
                           by_root: dict[int, Mention]) -> list[RelationConcept]:
        """The relations found that join two mentions, as concepts with their spans, in the order of the text."""
        out: list[RelationConcept] = []
        for (s, o), (predicate, extra) in found.items():
            sm, om = by_root.get(s), by_root.get(o)
            if sm is None or om is None or sm.hedged or om.hedged or sm is om:
                continue
            predicate = " ".join(predicate.split())
            if not predicate or predicate in NON_PREDICATES:
                continue
            # A noun that is no object ends a claim only as what is done or inferred, never as its subject.
            if not sm.listed or not (om.listed or is_activity(doc[om.root]) or is_inference(predicate)):
                continue
            tokens = [doc[s], doc[o]] + extra
            out.append(RelationConcept(sm.name, predicate, om.name, char_span(tokens), qualifiers(doc[s]),
                                       qualifiers(doc[o])))
        out.sort(key=lambda r: r.span or (0, 0))
        return out

    def _place_object(self, verb: Any, prep: Any, pobj: Any, found: dict[tuple[int, int], tuple[str, list[Any]]],
                      by_root: dict[int, Mention]) -> None:
        """(verb's object, prep, pobj) in place of sng_parser's (verb's subject, prep, pobj)."""
        for subject in self._subject_mention(verb, by_root):
            for obj in conjuncts(pobj):
                if found.get((subject.root, obj.i), ("",))[0] == prep.lower_:
                    del found[(subject.root, obj.i)]
        for dobj in (c for c in verb.children if c.dep_ == "dobj"):
            for thing in conjuncts(dobj):
                for obj in conjuncts(pobj):
                    if thing.i in by_root and obj.i in by_root and thing.i != obj.i:
                        found.setdefault((thing.i, obj.i), (prep.lower_, [prep]))


