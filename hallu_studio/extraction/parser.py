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
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from ..lexicon.forms import count_of, normalize_name
from ..lexicon.nouns import (is_abstract_noun, is_activity_noun, is_adjective_only, is_colour_noun, is_compound_noun,
                             is_noun_only, is_visual_noun, names_other_kind)
from ..lexicon.attributes import attribute_family
from ..lexicon.words import (COLORS, FRAMING_NOUNS, HEDGE_WORDS, INFERENCE_PREDICATES, MATERIALS, NON_ATTRIBUTES,
                             NON_PREDICATES, POSITION_ADJECTIVES, PRONOUNS, QUANTIFIER_NOUNS, RELATIVE_PRONOUNS,
                             SCENE_SUBJECT)
from ..model import AttributeConcept, ConceptSet, CountConcept, ObjectConcept, RelationConcept
from .spacy_pipeline import installed_model_name, load_english, loaded_model_name
from .tree_repairs import repair_tree

# Bump when the rules below change: extracted concepts (and the scores built on them) change too.
RULES_VERSION = "12"
COPULAS = frozenset({"be", "seem", "appear", "look", "remain", "become"})
DESCRIPTIVE_NOUNS = COLORS | MATERIALS
NOUN_SLOTS = frozenset({"attr", "dobj", "pobj", "nsubj", "nsubjpass", "appos", "conj"})


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


@dataclass
class _Mention:
    root: int  # token index of the head noun
    name: str
    span: tuple[int, int]
    hedged: bool = False
    # False for a noun that is no object but may end a claim: an activity ("engaged in surfing") or
    # an inferred notion ("used for transportation").
    listed: bool = True
    aliases: tuple[int, ...] = ()  # other token indices standing for it ("hanging" in "a mat hanging")
    tail: int | None = None  # the head noun spaCy hung on the name's first word ("hydrant" in "a fire hydrant")


def _char_span(tokens: Iterable[Any]) -> tuple[int, int]:
    toks = list(tokens)
    return (min(t.idx for t in toks), max(t.idx + len(t.text) for t in toks))


def _compound_tokens(root: Any) -> list[Any]:
    """The compound modifiers left of a head noun, outermost first ("living room table")."""
    out: list[Any] = []
    for child in root.lefts:
        if (child.dep_ == "compound" and child.is_alpha and not _describes(child)) or _lexical_compound(child):
            out.extend(_compound_tokens(child))
            out.append(child)
    return out


def _lexical_compound(modifier: Any) -> bool:
    """A modifier spaCy's small model tagged as an adjective that is the first word of a noun:

    * a word WordNet knows only as a noun ("oven" in "an oven mitt", "dish" in "a dish rack");
    * a word that forms one noun WordNet lists with the head right after it, where that noun is no kind of the
      head ("hot dog", "remote control", "light bulb": ``names_other_kind``) or the word is a gerund or noun
      ("living room", "walking stick", "retaining wall").

    A word that names a kind of the head stays an attribute ("polar bear", "electric guitar"), as do the words
    of the lexicon's attribute families ("red wine", "old man", "wooden spoon"), positions ("right hand", "left
    wing"), participles ("fried egg", "painted leaves") and comparatives or superlatives ("a lower level")."""
    if modifier.dep_ != "amod" or not modifier.is_alpha or modifier.tag_ in ("JJR", "JJS", "RBR", "RBS") or \
            attribute_family(modifier.lower_) is not None:
        return False
    if modifier.tag_ == "JJ" and is_noun_only(modifier.lower_):
        return True
    head = modifier.head
    # A participle describes ("painted leaves", "fried egg"); a position places ("left wing", "front end").
    if modifier.i + 1 != head.i or head.pos_ != "NOUN" or modifier.tag_ in ("VBN", "VBD") or \
            modifier.lower_ in POSITION_ADJECTIVES:
        return False
    word, name = modifier.lower_, head.lemma_.lower() or head.lower_
    return is_compound_noun(word, name) and (modifier.tag_ in ("NN", "NNS", "VBG") or word.endswith("ing")
                                             or names_other_kind(word, name))


# How spaCy's small model hangs the head noun of a compound on its first word after "and" ("a kite and a fire
# hydrant": "fire" is the conjunct, "hydrant" its amod).
_TAIL_DEPS = frozenset({"amod", "compound", "nmod", "npadvmod", "dep"})


def compound_tail(root: Any) -> Any | None:
    """The noun right after ``root`` that is the real head of its name, where the parse made ``root`` the head:
    a noun hung on it as a modifier ("fire" <- "hydrant"), or any word WordNet says forms one noun with it
    whatever its tag ("a trash can are": "can" read as an auxiliary). None for a noun standing on its own."""
    if root.pos_ != "NOUN" or _describes(root) or root.i + 1 >= len(root.doc):
        return None
    tail = root.doc[root.i + 1]
    if not tail.is_alpha or any(c.dep_ == "det" for c in tail.children) or any(t.i != root.i for t in tail.lefts):
        return None
    if tail.head.i == root.i and tail.dep_ in _TAIL_DEPS and tail.tag_ in ("NN", "NNS"):
        return tail
    # A participle is never the second word of a noun ("a dog staring": spaCy's lemma "star" makes "dog star").
    if tail.tag_ in ("VBG", "VBN", "VBD"):
        return None
    if root.head.i == tail.i:
        # "The trash can is white", "A trash can beside a bench": "trash" read as the subject of "can" (a modal
        # in the subject's slot, or the root).
        if root.dep_ != "nsubj" or not (tail.dep_ in NOUN_SLOTS or (tail.dep_ == "ROOT" and tail.pos_ == "NOUN")):
            return None
    elif tail.head.i == tail.i:
        return None
    return tail if is_compound_noun(root.lower_, tail.lemma_ or tail.lower_) else None


def _describes(compound: Any) -> bool:
    """A compound modifier that describes rather than names: "plastic table", "spiky hair"."""
    # A lower-case word tagged as a proper noun is no name ("a grassy hill" after a verb read as a noun).
    return compound.lower_ in DESCRIPTIVE_NOUNS or ((compound.pos_ != "PROPN" or compound.is_lower) and
                                                    is_adjective_only(compound.lower_))


def object_name(root: Any, tail: Any | None = None) -> str:
    """The object's name: compound modifiers and the head (and the head's ``compound_tail``), through the
    lexicon's normaliser ("tennis rackets" -> "tennis racket", "storage silos" -> "storage silo", "glasses"
    stays)."""
    parts = [t.lower_ for t in _compound_tokens(root)] + [root.lower_] + ([tail.lower_] if tail is not None else [])
    if root.pos_ == "PROPN":  # "United States", "Olympic Games": a name, not a plural
        return " ".join(parts)
    return normalize_name(" ".join(parts)) or root.lower_


def _conjuncts(token: Any) -> list[Any]:
    """The token and the words joined to it by "and" / "or" (recursively)."""
    out = [token]
    for child in token.children:
        if child.dep_ == "conj":
            out.extend(_conjuncts(child))
    return out


def _is_hedged(token: Any) -> bool:
    """An appositive marked as a guess, or an alternative joined to one."""
    node = token
    while node.dep_ == "conj" and node.head is not node:
        node = node.head
    if node.dep_ != "appos":
        return False
    window = [t.lower_ for t in node.doc[max(node.left_edge.i - 1, 0):node.i]]
    return any(c.dep_ == "advmod" and c.lower_ in HEDGE_WORDS for c in node.children) or \
        any(w in HEDGE_WORDS for w in window)


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

    def cache_size_now(self) -> int:
        return len(self._cache)

    # ------------------------------------------------------------------ rules

    def _concepts(self, doc: Any) -> ConceptSet:
        if not doc.text.strip():
            return ConceptSet()
        repair_tree(doc)
        graph = _sng_parse(doc)
        mentions = self._mentions(doc, graph)
        scene_claims = _scene_claims(doc)
        # "it might be early fall": the fall is what the picture is claimed to show, not a thing in it.
        claimed = {i for i, _ in scene_claims}
        for m in mentions:
            m.listed = m.listed and m.root not in claimed
        by_root = {i: m for m in mentions for i in (m.root, *m.aliases)}
        things = {i: m for i, m in by_root.items() if m.listed}
        attributes = self._attributes(doc, things)
        relations = self._relations(doc, graph, by_root) + [c for _, c in scene_claims]
        return _dedupe(
            [ObjectConcept(m.name, m.span) for m in mentions if m.listed],
            attributes,
            relations,
            _counts(doc, [m for m in mentions if m.listed]),
        )

    def _mentions(self, doc: Any, graph: dict[str, Any]) -> list[_Mention]:
        roots: list[Any] = []
        for ent in graph["entities"]:
            start, end = ent["span_bounds"]
            roots.append(doc[start:end].root)
        # spaCy's small model tags some nouns after "or" as conjuncts without a chunk: add them.
        seen = {r.i for r in roots}
        for r in list(roots):
            for c in _conjuncts(r)[1:]:
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
                for c in _conjuncts(token)[1:]:
                    if c.i not in seen and c.pos_ in ("NOUN", "PROPN"):
                        roots.append(c)
                        seen.add(c.i)
        out: list[_Mention] = []
        absorbed: set[int] = set()  # tails of compounds named already ("hydrant" of "fire hydrant")
        for root in sorted(roots, key=lambda t: t.i):
            if root.i in absorbed:
                continue
            aliases: tuple[int, ...] = ()
            named = root
            # "a woven mat hanging": the gerund is what the mat does; the mat is the thing.
            if _is_activity(root):
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
                compounds = _compound_tokens(named)
                out.append(_Mention(root=named.i, name=object_name(named, tail),
                                    span=_char_span(compounds + [named] + ([tail] if tail is not None else [])),
                                    hedged=_is_hedged(named), aliases=aliases,
                                    tail=tail.i if tail is not None else None))
            elif _is_claim_end(named):
                out.append(_Mention(root=named.i, name=object_name(named), span=_char_span([named]),
                                    hedged=_is_hedged(named), listed=False))
        return out

    def _subject_mention(self, token: Any, by_root: dict[int, _Mention]) -> list[_Mention]:
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
        out: list[_Mention] = []
        for subj in subjects:
            # "the table, which is wooden": the relative pronoun stands for the noun it follows.
            if subj.lower_ in RELATIVE_PRONOUNS and token.dep_ == "relcl":
                subj = token.head
            for s in _conjuncts(subj):
                if s.i in by_root:
                    out.append(by_root[s.i])
        return out

    def _attributes(self, doc: Any, by_root: dict[int, _Mention]) -> list[AttributeConcept]:
        out: list[AttributeConcept] = []
        tails = {m.tail for m in by_root.values() if m.tail is not None}

        def add(mention: _Mention, word: Any) -> None:
            text = word.lower_.strip()
            if word.i in tails:  # part of a name ("hydrant" of "fire hydrant"), not a description
                return
            if not text or text in NON_ATTRIBUTES or word.like_num or not any(ch.isalpha() for ch in text):
                return
            if word.pos_ in ("DET", "PRON", "ADP", "NUM"):
                return
            # The attribute's own word: a judge that flags "brown" must not flag the "short" beside it.
            out.append(AttributeConcept(mention.name, text, _char_span([word])))

        for root_i, mention in by_root.items():
            root = doc[root_i]
            if root_i != mention.root and is_colour_noun(root.lower_):
                add(mention, root)
            for child in root.children:
                if (child.dep_ == "amod" and not _lexical_compound(child)) or \
                        (child.dep_ == "compound" and _describes(child)):
                    for adj in _conjuncts(child):
                        add(mention, adj)
            # "a car parked" (participle with nothing after it) describes the car.
            for child in root.children:
                if child.dep_ == "acl" and child.tag_ == "VBN" and not _has_prep_object(child):
                    add(mention, child)
        for token in doc:
            # Predicative adjective: "the column is tall", "the table, which is wooden".
            if token.dep_ == "acomp" and token.pos_ in ("ADJ", "VERB"):
                for mention in self._subject_mention(token.head, by_root):
                    for adj in _conjuncts(token):
                        add(mention, adj)
            # A colour or material as the complement: "the saucer is silver, oval and aluminium".
            elif token.dep_ == "attr" and token.head.lemma_.lower() in COPULAS and \
                    attribute_family(token.lower_) is not None:
                for mention in self._subject_mention(token.head, by_root):
                    for word in _conjuncts(token):
                        if attribute_family(word.lower_) is not None or word.pos_ == "ADJ":
                            add(mention, word)
            # Passive participle with no object: "the column is intricately carved".
            elif token.tag_ == "VBN" and token.dep_ in ("ROOT", "conj", "ccomp", "relcl", "xcomp") and \
                    any(c.dep_ == "auxpass" for c in token.children) and not _has_prep_object(token):
                for mention in self._subject_mention(token, by_root):
                    add(mention, token)
        # In the order of the text, so that ``_dedupe`` keeps an attribute's first mention, not its first rule's.
        out.sort(key=lambda a: a.span or (0, 0))
        return out

    def _relations(self, doc: Any, graph: dict[str, Any], by_root: dict[int, _Mention]) -> list[RelationConcept]:
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
            if token.dep_ != "pobj" or token.i not in by_root:
                continue
            prep = token.head
            verb = prep.head
            place_noun = verb.dep_ == "pobj" and verb.lower_ in _PLACE_NOUNS  # "on the left side of": see below
            if prep.dep_ == "prep" and verb.i in by_root and not place_noun:
                # "a remote or a phone on the table": a noun the parser did not chunk.
                for subject in _conjuncts(verb):
                    for obj in _conjuncts(token):
                        if subject.i in by_root and obj.i in by_root and (subject.i, obj.i) not in found:
                            found[(subject.i, obj.i)] = (prep.lower_, [prep])
                continue
            if prep.dep_ == "prep" and verb.pos_ in ("ADJ", "ADV") and verb.head.lemma_.lower() in COPULAS:
                # "The flag is right of the astronaut", "is next to": a two-word preposition led by an adverb.
                predicate = f"{verb.lower_} {prep.lower_}"
                placed = [g for c in verb.children if c.dep_ == "prep" and c.i < prep.i
                          for g in c.children if g.dep_ == "pobj" and g.i in by_root]
                if placed:
                    # "close to the person with a surfboard": a second phrase describes the first one's object.
                    for obj in _conjuncts(token):
                        if obj.i in by_root and placed[-1].i != obj.i:
                            found.setdefault((placed[-1].i, obj.i), (prep.lower_, [prep]))
                    continue
                for subject in self._subject_mention(verb.head, by_root):
                    for obj in _conjuncts(token):
                        if obj.i in by_root and subject.root != obj.i:
                            found.setdefault((subject.root, obj.i), (predicate, [verb, prep]))
                continue
            if (prep.dep_ == "prep" and verb.dep_ == "pobj" and verb.lower_ in _PLACE_NOUNS
                    and verb.head.dep_ == "prep" and verb.head.head.pos_ in ("VERB", "AUX")):
                # "is in front of the car", "sits on top of the box": a preposition of three words.
                predicate = " ".join(t.lower_ for t in doc[verb.head.i:prep.i + 1] if t.pos_ != "DET")
                for subject in self._subject_mention(verb.head.head, by_root):
                    for obj in _conjuncts(token):
                        if obj.i in by_root and subject.root != obj.i:
                            found.setdefault((subject.root, obj.i), (predicate, [verb.head, verb, prep]))
                continue
            # "hikes up a trail": spaCy makes "up" a particle that holds the object.
            if prep.dep_ not in ("prep", "agent", "prt") or verb.pos_ not in ("VERB", "AUX"):
                continue
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
                continue
            else:
                # sng_parser finds active verbs but keeps only the preposition ("standing on" -> "on").
                predicate, active = f"{verb.lower_} {prep.lower_}", True
            negated = any(c.dep_ == "neg" for c in verb.children)
            for subject in self._subject_mention(verb, by_root):
                for obj in _conjuncts(token):
                    if obj.i in by_root and subject.root != obj.i:
                        key = (subject.root, obj.i)
                        if negated:  # "may not be engaging with the women" claims no relation
                            found.pop(key, None)
                        elif not active or found.get(key, (prep.lower_,))[0] == prep.lower_:
                            found[key] = (predicate, [verb, prep])
        _drop_negated(doc, found, lambda verb: self._subject_mention(verb, by_root))
        out: list[RelationConcept] = []
        for (s, o), (predicate, extra) in found.items():
            sm, om = by_root.get(s), by_root.get(o)
            if sm is None or om is None or sm.hedged or om.hedged or sm is om:
                continue
            predicate = " ".join(predicate.split())
            if not predicate or predicate in NON_PREDICATES:
                continue
            # A noun that is no object ends a claim only as what is done or inferred, never as its subject.
            if not sm.listed or not (om.listed or _is_activity(doc[om.root]) or _is_inference(predicate)):
                continue
            tokens = [doc[s], doc[o]] + extra
            out.append(RelationConcept(sm.name, predicate, om.name, _char_span(tokens), _qualifiers(doc[s]),
                                       _qualifiers(doc[o])))
        out.sort(key=lambda r: r.span or (0, 0))
        return out

    def _place_object(self, verb: Any, prep: Any, pobj: Any, found: dict[tuple[int, int], tuple[str, list[Any]]],
                      by_root: dict[int, _Mention]) -> None:
        """(verb's object, prep, pobj) in place of sng_parser's (verb's subject, prep, pobj)."""
        for subject in self._subject_mention(verb, by_root):
            for obj in _conjuncts(pobj):
                if found.get((subject.root, obj.i), ("",))[0] == prep.lower_:
                    del found[(subject.root, obj.i)]
        for dobj in (c for c in verb.children if c.dep_ == "dobj"):
            for thing in _conjuncts(dobj):
                for obj in _conjuncts(pobj):
                    if thing.i in by_root and obj.i in by_root and thing.i != obj.i:
                        found.setdefault((thing.i, obj.i), (prep.lower_, [prep]))


def _drop_negated(doc: Any, found: dict[tuple[int, int], tuple[str, list[Any]]], subjects_of: Any) -> None:
    """A negated verb claims no relation: "is not wearing the goggles", "cannot feel the kite" (sng_parser
    keeps the verb and drops the "not")."""
    for verb in doc:
        if verb.pos_ not in ("VERB", "AUX") or not any(c.dep_ == "neg" for c in verb.children):
            continue
        objects = [g for c in verb.children if c.dep_ == "dobj" for g in _conjuncts(c)]
        objects += [g for c in verb.children if c.dep_ in ("prep", "agent")
                    for p in c.children if p.dep_ == "pobj" for g in _conjuncts(p)]
        for subject in subjects_of(verb):
            for obj in objects:
                found.pop((subject.root, obj.i), None)


# Nouns that make a preposition of three words with the ones around them ("in front of", "on top of").
_PLACE_NOUNS = frozenset({"front", "top", "back", "side", "middle", "left", "right", "bottom", "edge", "center",
                          "centre"})


def is_thing(root: Any) -> bool:
    """Whether a head noun names something visible: not a pronoun, number, framing, collective or
    colour word, fraction or activity."""
    lemma = (root.lemma_ or root.text).lower()
    if root.pos_ in ("PRON", "NUM", "DET") or lemma in PRONOUNS or root.lower_ in PRONOUNS:
        return False
    if not any(ch.isalpha() for ch in root.text):
        return False
    if lemma in FRAMING_NOUNS or lemma in QUANTIFIER_NOUNS or root.lower_ in QUANTIFIER_NOUNS:
        return False
    if root.pos_ == "PROPN":  # a name: "Nissan" is a car here, not WordNet's month
        return True
    return not is_colour_noun(root.lower_) and not _is_activity(root) and not is_abstract_noun(lemma)


def _is_activity(token: Any) -> bool:
    return token.lower_.endswith("ing") and (token.tag_ == "VBG" or is_activity_noun(token.lower_))


def _is_claim_end(token: Any) -> bool:
    """A noun that is no object but can end an inference or activity claim (see ``_Mention.listed``)."""
    if token.pos_ not in ("NOUN", "VERB") or not token.is_alpha or token.lower_ in PRONOUNS:
        return False
    lemma = (token.lemma_ or token.text).lower()
    return _is_activity(token) or is_abstract_noun(lemma) or (lemma in FRAMING_NOUNS and lemma not in QUANTIFIER_NOUNS)


def _is_inference(predicate: str) -> bool:
    return predicate in INFERENCE_PREDICATES or predicate.split()[-1] == "for"


_MODALS = frozenset({"may", "might", "could", "must"})
_SEEMING_VERBS = frozenset({"appear", "seem"})
_PICTURE_PRONOUNS = frozenset({"it", "this", "that"})


def _scene_claims(doc: Any) -> list[tuple[int, RelationConcept]]:
    """Hedged claims about the whole picture: "it is probably summer", "it may be evening or night",
    "it appears to be a birthday celebration" -> (scene, <hedged copula>, noun).

    Only nouns that are no object make such a claim ("it is probably a kitchen" names a kitchen).
    """
    out: list[tuple[int, RelationConcept]] = []
    for token in doc:
        # spaCy's small model tags some time words as adjectives ("it appears to be daytime").
        if token.dep_ not in ("attr", "acomp") or token.head.lemma_ != "be" or not (
                token.pos_ == "NOUN" or token.lemma_.lower() in FRAMING_NOUNS):
            continue
        copula = token.head
        governor = copula.head if copula.dep_ == "xcomp" else copula
        subjects = [c for c in governor.children if c.dep_ == "nsubj"]
        if not subjects or subjects[0].lower_ not in _PICTURE_PRONOUNS:
            continue
        modal = next((c for c in copula.children if c.dep_ == "aux" and c.lower_ in _MODALS), None)
        hedge = next((c for c in (*copula.children, *governor.children)
                      if c.dep_ == "advmod" and c.lower_ in HEDGE_WORDS), None)
        if modal is not None:
            predicate, marker = f"{modal.lower_} be", modal
        elif governor is not copula and governor.lemma_ in _SEEMING_VERBS:
            predicate, marker = f"{governor.lemma_}s to be", governor
        elif hedge is not None:
            predicate, marker = f"is {hedge.lower_}", hedge
        else:
            continue
        for noun in _conjuncts(token):
            if not (noun.pos_ == "NOUN" or noun.lemma_.lower() in FRAMING_NOUNS) or \
                    (is_thing(noun) and is_visual_noun(noun.lower_) is not False):
                continue
            out.append((noun.i, RelationConcept(SCENE_SUBJECT, predicate, object_name(noun),
                                                _char_span([marker, noun]))))
    return out


def _counts(doc: Any, mentions: list[_Mention]) -> list[CountConcept]:
    """ "two dogs" -> (dog, 2), "two pairs of glasses" -> (glasses, 2); the span is the number's alone."""
    out: list[CountConcept] = []
    for m in mentions:
        root = doc[m.root]
        counted = root
        # "two pairs of glasses": the number sits on "pairs".
        if root.head.dep_ == "prep" and root.head.lower_ == "of" and root.head.head.lemma_.lower() == "pair":
            counted = root.head.head
        number = _number_of(counted)
        if number is not None:
            out.append(CountConcept(m.name, number[0], _char_span([number[1]])))
            continue
        # "two astronauts, a face and two visors": in a list that counts, "a" says one.
        left = _word_before(root)
        if left is not None and left.lower_ in ("a", "an") and _in_counting_list(left, root):
            out.append(CountConcept(m.name, 1, _char_span([left])))
    return out


def _number_of(token: Any) -> tuple[int, Any] | None:
    """The number counting a noun: its "nummod", or (the small model's long lists go astray) a number
    right before it that counts nothing else."""
    for child in token.children:
        # A number after its noun names it ("model 4708", "platform 9"): it counts nothing.
        n = count_of(child.text) if child.dep_ == "nummod" and child.i < token.i else None
        if n is not None and n > 0:
            return n, child
    left = _word_before(token)
    if left is not None and left.pos_ == "NUM" and left.dep_ != "nummod":
        n = count_of(left.text)
        if n is not None and n > 0:
            return n, left
    return None


def _word_before(noun: Any) -> Any | None:
    """The word before a noun's modifiers ("two" in "two large blue cranes")."""
    i = noun.i - 1
    while i >= 0 and (noun.doc[i].dep_ in ("amod", "compound") or noun.doc[i].pos_ == "ADJ"):
        i -= 1
    return noun.doc[i] if i >= 0 else None


def _in_counting_list(article: Any, noun: Any) -> bool:
    """Whether a noun sits in a list where another kind is counted: between it and a number there is no
    verb, preposition or clause break, and the number does not count the same noun ("three levels -
    a lower level")."""
    doc = noun.doc
    for t in noun.sent:
        if t.i == article.i or t.pos_ != "NUM" or not count_of(t.text):
            continue
        lo, hi = sorted((t.i, noun.i))
        if any(x.pos_ in ("VERB", "AUX", "ADP", "SCONJ", "PRON") or x.text in ".;:-–—" for x in doc[lo + 1:hi]):
            continue
        counted = next((x for x in doc[t.i + 1:] if x.pos_ in ("NOUN", "PROPN")), None)
        if counted is not None and counted.lemma_ != noun.lemma_:
            return True
    return False


def _has_prep_object(verb: Any) -> bool:
    return any(c.dep_ in ("prep", "agent") and any(g.dep_ == "pobj" for g in c.children) for c in verb.children) \
        or any(c.dep_ == "dobj" for c in verb.children)


def _qualifiers(noun: Any) -> tuple[str, ...]:
    """The attributes (colour, size, material, ...) written before a noun, which say which of several things of
    its name it is: "the small red metal cone" -> ("small", "red", "metal")."""
    words: list[Any] = []
    for child in noun.children:
        if child.i < noun.i and (child.dep_ == "amod" or (child.dep_ == "compound" and _describes(child))):
            words += _conjuncts(child)
            # "red metal cone": spaCy hangs "red" on "metal"
            words += [g for g in child.children if g.dep_ == "amod" and g.i < child.i]
    return tuple(w.lower_ for w in sorted(set(words), key=lambda w: w.i) if attribute_family(w.lower_) is not None)


def _dedupe(objects: list[ObjectConcept], attributes: list[AttributeConcept],
            relations: list[RelationConcept], counts: list[CountConcept]) -> ConceptSet:
    """Each concept once per response, at its first mention."""
    seen_o: set[str] = set()
    seen_a: set[tuple[str, str]] = set()
    objs = [o for o in objects if not (o.name in seen_o or seen_o.add(o.name))]  # type: ignore[func-returns-value]
    attrs = [a for a in attributes if a.attribute != a.object and
             not ((a.object, a.attribute) in seen_a or seen_a.add((a.object, a.attribute)))]  # type: ignore[func-returns-value]
    # One relation per (subject, predicate, object), unless each says which objects it means, differently
    # ("the red cube is left of the blue cube", "the blue cube is left of the gray cube").
    kept: dict[tuple[str, str, str], list[tuple[tuple[str, ...], tuple[str, ...]]]] = {}
    rels = []
    for r in relations:
        key, quals = (r.subject, r.predicate, r.object), (r.subject_attributes, r.object_attributes)
        earlier = kept.get(key)
        if earlier is None or (any(quals) and all(any(q) for q in earlier) and quals not in earlier):
            kept.setdefault(key, []).append(quals)
            rels.append(r)
    seen_c: set[tuple[str, int]] = set()
    cnts = [c for c in counts if not ((c.object, c.count) in seen_c or seen_c.add((c.object, c.count)))]  # type: ignore[func-returns-value]
    return ConceptSet(objects=objs, attributes=attrs, relations=rels, counts=cnts)
