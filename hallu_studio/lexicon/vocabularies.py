"""Closed object vocabularies: the names an object list is complete for.

A benchmark's object list (COCO's instance annotations, say) is complete only inside its
vocabulary: a COCO-80 category the list does not hold is absent from the image, while a
word outside the 80 ("tree", "sky", "shirt") is something the list says nothing about.
``Vocabulary.category_of`` maps a name a text uses to the category it belongs to, or None
when the vocabulary does not cover it:

1. the name, normalised (``forms.normalize_name``), is a category or one of its listed
   aliases ("motorbike", "sofa", "table" for COCO's *dining table*);
2. a name of several words that WordNet lists as one noun is read whole ("hot dog" is
   food, not a dog; "teddy bear" a toy, not a bear), else by its head noun ("red car");
3. WordNet: the name's most frequent senses are kinds of a category's ("terrier" is a dog,
   "chef" a person). A more general name ("animal", "vehicle") belongs to no category: it
   could be any of several.

>>> coco = vocabulary("coco-80")
>>> [coco.category_of(w) for w in ("motorbikes", "hot dog", "dog", "teddy bear", "bear", "table", "tree")]
['motorcycle', 'hot dog', 'dog', 'teddy bear', 'bear', 'dining table', None]
>>> coco.category_of("terrier"), coco.category_of("animal"), len(coco.categories)
('dog', None, 80)
>>> own = vocabulary(["cat", "sofa"])
>>> own.name, own.category_of("couch"), own.category_of("dog")
('custom', 'sofa', None)

``Vocabulary.mentions`` reads a whole text for the vocabulary's own names and aliases, every occurrence
(human reference captions, say); ``chair_mentions`` reads one the way CHAIR's released code does, with
CHAIR's own synonym groups (``CHAIR_SYNONYMS``: "goat" is a sheep there, and "bow" a tie):

>>> coco.mentions("Two dogs chase a teddy bear past the sofa.")
[('dog', 'dog'), ('teddy bear', 'teddy bear'), ('sofa', 'couch')]
>>> chair_mentions("A baby bird and a goat near the toilet seat; a baby goat.")
[('bird', 'bird'), ('goat', 'sheep'), ('toilet', 'toilet'), ('baby', 'person'), ('goat', 'sheep')]
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Mapping, Sequence

from ..model.base import NAMED_VOCABULARIES
from .forms import head_noun, normalize_name, singular
from .wordnet import load_wordnet

# COCO's 80 object categories (2014/2017 detection annotations), in their id order.
COCO_80: tuple[str, ...] = (
    "person", "bicycle", "car", "motorcycle", "airplane", "bus", "train", "truck", "boat", "traffic light",
    "fire hydrant", "stop sign", "parking meter", "bench", "bird", "cat", "dog", "horse", "sheep", "cow",
    "elephant", "bear", "zebra", "giraffe", "backpack", "umbrella", "handbag", "tie", "suitcase", "frisbee",
    "skis", "snowboard", "sports ball", "kite", "baseball bat", "baseball glove", "skateboard", "surfboard",
    "tennis racket", "bottle", "wine glass", "cup", "fork", "knife", "spoon", "bowl", "banana", "apple",
    "sandwich", "orange", "broccoli", "carrot", "hot dog", "pizza", "donut", "cake", "chair", "couch",
    "potted plant", "bed", "dining table", "toilet", "tv", "laptop", "mouse", "remote", "keyboard", "cell phone",
    "microwave", "oven", "toaster", "sink", "refrigerator", "book", "clock", "vase", "scissors", "teddy bear",
    "hair drier", "toothbrush")

# Other names of the COCO categories, beyond what WordNet's hyponymy finds from the category name: spellings,
# the everyday word where COCO's name is narrower ("table" for dining table, "ball" for sports ball), and
# words whose first WordNet senses miss the category ("kid" is first a goat, "plane" a flat surface).
COCO_80_ALIASES: Mapping[str, tuple[str, ...]] = {
    "person": ("people", "man", "woman", "boy", "girl", "child", "kid", "baby", "toddler", "guy", "lady",
               "gentleman", "adult", "teenager", "teen", "player", "skier", "snowboarder", "surfer", "skateboarder",
               "skater", "rider", "biker", "cyclist", "bicyclist", "pedestrian", "crowd", "passenger", "worker",
               "chef", "cook", "officer", "policeman", "soldier", "spectator", "audience", "individual", "human",
               "family", "couple", "team", "batter", "catcher", "pitcher", "umpire", "bride", "groom", "tourist"),
    "bicycle": ("bike", "cycle"),
    "car": ("automobile", "sedan", "taxi", "cab", "suv", "jeep", "minivan", "van"),
    "motorcycle": ("motorbike", "motor bike", "moped", "scooter", "dirt bike"),
    "airplane": ("plane", "aeroplane", "aircraft", "jet", "airliner", "jetliner"),
    "bus": ("autobus", "coach", "double decker"),
    "train": ("locomotive", "tram", "trolley", "railcar", "subway"),
    "truck": ("lorry", "pickup", "pickup truck", "firetruck", "fire truck"),
    "boat": ("ship", "sailboat", "canoe", "kayak", "yacht", "ferry", "vessel", "raft"),
    "traffic light": ("traffic signal", "stoplight", "stop light"),
    "fire hydrant": ("hydrant", "fireplug"),
    "parking meter": ("meter",),
    "bench": ("pew",),
    "bird": ("pigeon", "seagull", "gull", "duck", "goose", "parrot", "swan", "owl", "chicken"),
    "cat": ("kitten", "kitty"),
    "dog": ("puppy", "pup", "doggy"),
    "horse": ("pony", "foal", "stallion", "mare"),
    "sheep": ("lamb", "ram", "ewe"),
    "cow": ("cattle", "calf", "bull", "ox", "steer"),
    "bear": ("grizzly", "polar bear", "brown bear", "black bear"),
    "backpack": ("knapsack", "rucksack"),
    "umbrella": ("parasol",),
    "handbag": ("purse", "bag", "tote"),
    "tie": ("necktie", "bowtie", "bow tie"),
    "suitcase": ("luggage", "baggage", "briefcase"),
    "frisbee": ("flying disc", "disc"),
    "skis": ("ski",),
    "sports ball": ("ball", "football", "soccer ball", "baseball", "tennis ball", "basketball", "volleyball"),
    "kite": (),
    "baseball bat": ("bat",),
    "baseball glove": ("glove", "mitt", "baseball mitt"),
    "skateboard": ("skate board",),
    "surfboard": ("surf board",),
    "tennis racket": ("racket", "racquet", "tennis racquet"),
    "bottle": (),
    "wine glass": ("wineglass",),
    "cup": ("mug", "teacup", "coffee cup"),
    "knife": (),
    "bowl": (),
    "banana": (),
    "sandwich": ("burger", "hamburger", "sub"),
    "orange": ("tangerine", "mandarin"),
    "hot dog": ("hotdog", "frankfurter", "frank", "wiener", "sausage"),
    "pizza": (),
    "donut": ("doughnut",),
    "cake": ("cupcake", "cheesecake"),
    "chair": ("seat", "stool", "armchair"),
    "couch": ("sofa", "loveseat", "settee"),
    "potted plant": ("plant", "houseplant", "house plant", "flower pot", "flowerpot", "pot plant"),
    "bed": (),
    "dining table": ("table", "desk", "kitchen table", "coffee table"),
    "toilet": ("commode",),
    "tv": ("television", "tv screen", "television set", "monitor"),
    "laptop": ("notebook computer", "laptop computer", "computer"),
    "mouse": ("computer mouse",),
    "remote": ("remote control", "controller", "clicker"),
    "keyboard": (),
    "cell phone": ("phone", "cellphone", "mobile phone", "smartphone", "telephone"),
    "microwave": ("microwave oven",),
    "oven": ("stove",),
    "toaster": (),
    "sink": ("washbasin", "basin"),
    "refrigerator": ("fridge", "freezer"),
    "book": ("novel", "notebook"),
    "clock": (),
    "vase": (),
    "scissors": ("shears",),
    "teddy bear": ("teddy", "stuffed animal", "stuffed bear", "plush toy"),
    "hair drier": ("hair dryer", "hairdryer", "blow dryer", "blowdryer"),
    "toothbrush": ("tooth brush",),
}

# The names vocabularies are known by (``Sample.reference_vocabulary`` may name one).

# Image collections a named vocabulary was made for: ``Sample.meta["image_source"]`` -> the vocabulary a
# fixed-vocabulary metric (CHAIR) reads a sample of that collection in, object list or not. The marker says
# where the image comes from, never what its references settle (``grounding.Scope``: captions stay open-world).
IMAGE_SOURCE_VOCABULARIES: Mapping[str, str] = {"coco": "coco-80"}


@dataclass(frozen=True)
class Vocabulary:
    """A closed set of object categories and the words that name each one (see the module docstring)."""

    name: str
    categories: tuple[str, ...]
    aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict, compare=False)
    # Names only as listed: no head noun of a longer name, no WordNet kinds (CHAIR's released reading).
    exact: bool = False

    def __post_init__(self) -> None:
        table: dict[str, str] = {}
        for category in self.categories:
            for word in (category, *self.aliases.get(category, ())):
                table.setdefault(normalize_name(word) or word, category)
        object.__setattr__(self, "_table", table)
        object.__setattr__(self, "_longest", max((len(k.split()) for k in table), default=1))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.category_of(name) is not None

    def category_of(self, name: str) -> str | None:
        """The category ``name`` names, or None when the vocabulary does not cover it."""
        return _category_of(self, normalize_name(name) or name.strip().lower())

    def categories_of(self, names: Sequence[str]) -> set[str]:
        """The categories a list of names covers (an image's object list, say)."""
        return {c for c in (self.category_of(n) for n in names) if c is not None}

    def describe(self) -> str:
        """What evidence and reasons call it: "coco-80", or "custom (12 names)"."""
        return self.name if self.name != "custom" else f"custom ({len(self.categories)} names)"

    def mentions(self, text: str) -> list[tuple[str, str]]:
        """Every place ``text`` names a category by one of the vocabulary's own names or aliases, in order, as
        (the name as read, its category); the longest name wins ("teddy bear" before "bear"). Words are read in
        lower case and singular; WordNet kinds are not looked up (a text's every noun would be)."""
        table: dict[str, str] = self._table  # type: ignore[attr-defined]
        words = text_words(text)
        out: list[tuple[str, str]] = []
        i = 0
        while i < len(words):
            for n in range(min(self._longest, len(words) - i), 0, -1):  # type: ignore[attr-defined]
                phrase = " ".join(words[i:i + n])
                if phrase in table:
                    out.append((phrase, table[phrase]))
                    i += n
                    break
            else:
                i += 1
        return out


@lru_cache(maxsize=200_000)
def _category_of(vocab: Vocabulary, norm: str) -> str | None:
    table: dict[str, str] = vocab._table  # type: ignore[attr-defined]
    if not norm:
        return None
    if norm in table or vocab.exact:
        return table.get(norm)
    wn = load_wordnet()
    words = norm.split()
    compound = len(words) > 1 and wn is not None and bool(wn.synsets("_".join(words), "n"))
    if not compound and len(words) > 1:
        head = head_noun(norm)
        if head in table:
            return table[head]
    if wn is None:
        return None
    # A kind of one category's (first senses), read on the whole name where WordNet lists it, else on its head.
    looked_up = "_".join(words) if compound else head_noun(norm)
    found = {c for c in vocab.categories for anchor in _anchors(vocab, c) if _is_kind_of(looked_up, anchor)}
    return found.pop() if len(found) == 1 else None


def _anchors(vocab: Vocabulary, category: str) -> tuple[str, ...]:
    """The WordNet word a category is looked up by: its own name, where WordNet lists it as a noun. A name it
    does not list ("stop sign", "sports ball") has no anchor, since its head alone ("sign", "ball") names far
    more than the category: the category's aliases say what else names it."""
    wn = load_wordnet()
    name = category.replace(" ", "_")
    return (name,) if wn is not None and wn.synsets(name, "n") else ()


_SENSES = 1


@lru_cache(maxsize=200_000)
def _is_kind_of(word: str, anchor: str) -> bool:
    """Whether ``word``'s most frequent noun sense is ``anchor``'s first sense or a kind of it."""
    wn = load_wordnet()
    if wn is None or not word or not anchor:
        return False
    target = {s.offset for s in wn.synsets(anchor, "n")[:1]}
    if not target:
        return False
    if {s.offset for s in wn.synsets(word, "n")[:_SENSES]} & target:
        return True
    return bool(set(wn.hypernym_closure(word, "n", senses=_SENSES)) & target)


@lru_cache(maxsize=64)
def _named(name: str) -> Vocabulary:
    if name == "coco-80":
        return Vocabulary("coco-80", COCO_80, COCO_80_ALIASES)
    raise ValueError(f"unknown object vocabulary {name!r}; known: {', '.join(NAMED_VOCABULARIES)}, or a list of names")


def vocabulary(spec: str | Sequence[str], *, exact: bool = False) -> Vocabulary:
    """A vocabulary by name (``NAMED_VOCABULARIES``) or from a list of category names ("custom"); ``exact``: its
    names only as listed (``Vocabulary.exact``).

    Raises ``ValueError`` for an unknown name or an empty list.
    """
    if isinstance(spec, str):
        named = _named(spec.strip().lower())
        return dataclasses.replace(named, exact=True) if exact else named
    names = tuple(dict.fromkeys(n.strip() for n in spec if isinstance(n, str) and n.strip()))
    if not names:
        raise ValueError("an object vocabulary needs at least one name")
    return Vocabulary("custom", names, exact=exact)


# Words as CHAIR's tokenizer leaves them (nltk's word_tokenize): hyphenated words whole, a possessive's "'s" apart.
_TEXT_WORD = re.compile(r"[^\W_]+(?:-[^\W_]+)*")


def text_words(text: str) -> list[str]:
    """The words of a text in lower case, each made singular: "The dog's puppies" -> ["the", "dog", "s", "puppy"]."""
    return [singular(w) for w in _TEXT_WORD.findall(text.lower())]


# CHAIR's own synonym groups (Rohrbach et al., "Object Hallucination in Image Captioning", EMNLP 2018), as its
# released code reads them from data/synonyms.txt (github.com/LisaAnne/Hallucination, commit 6e4d33c): each
# COCO category and the words counted as it. Written here in this module's form; where they differ from
# COCO_80_ALIASES they are CHAIR's choices ("goat" under sheep, "bow" under tie, "container" under bowl,
# "bagel" under donut, "pancake" under cake, "buffalo" and "bison" under cow, "panda" under bear). Three
# entries of the file never match anything in CHAIR's code and are left out: " motor bike" and " cheesecake"
# (a double space before them keeps a leading space after CHAIR splits the line on ", "), and "iPhone" (CHAIR
# lower-cases the text it reads). The file's misspellings are kept, as CHAIR matches them ("solider",
# "televison", "phon", "knive").
CHAIR_SYNONYMS: Mapping[str, tuple[str, ...]] = {
    "person": ("girl", "boy", "man", "woman", "kid", "child", "chef", "baker", "people", "adult", "rider", "children",
               "baby", "worker", "passenger", "sister", "biker", "policeman", "cop", "officer", "lady", "cowboy",
               "bride", "groom", "male", "female", "guy", "traveler", "mother", "father", "gentleman", "pitcher",
               "player", "skier", "snowboarder", "skater", "skateboarder", "foreigner", "caller", "offender",
               "coworker", "trespasser", "patient", "politician", "soldier", "grandchild", "serviceman", "walker",
               "drinker", "doctor", "bicyclist", "thief", "buyer", "teenager", "student", "camper", "driver",
               "solider", "hunter", "shopper", "villager"),
    "bicycle": ("bike", "unicycle", "minibike", "trike"),
    "car": ("automobile", "van", "minivan", "sedan", "suv", "hatchback", "cab", "jeep", "coupe", "taxicab", "limo",
            "taxi"),
    "motorcycle": ("scooter", "motor cycle", "motorbike", "moped"),
    "airplane": ("jetliner", "plane", "air plane", "monoplane", "aircraft", "jet", "airbus", "biplane", "seaplane"),
    "bus": ("minibus", "trolley"),
    "train": ("locomotive", "tramway", "caboose"),
    "truck": ("pickup", "lorry", "hauler", "firetruck"),
    "boat": ("ship", "liner", "sailboat", "motorboat", "dinghy", "powerboat", "speedboat", "canoe", "skiff", "yacht",
             "kayak", "catamaran", "pontoon", "houseboat", "vessel", "rowboat", "trawler", "ferryboat", "watercraft",
             "tugboat", "schooner", "barge", "ferry", "sailboard", "paddleboat", "lifeboat", "freighter", "steamboat",
             "riverboat", "battleship", "steamship"),
    "traffic light": ("street light", "traffic signal", "stop light", "streetlight", "stoplight"),
    "fire hydrant": ("hydrant",),
    "stop sign": (),
    "parking meter": (),
    "bench": ("pew",),
    "bird": ("ostrich", "owl", "seagull", "goose", "duck", "parakeet", "falcon", "robin", "pelican", "waterfowl",
             "heron", "hummingbird", "mallard", "finch", "pigeon", "sparrow", "seabird", "osprey", "blackbird", "fowl",
             "shorebird", "woodpecker", "egret", "chickadee", "quail", "bluebird", "kingfisher", "buzzard", "willet",
             "gull", "swan", "bluejay", "flamingo", "cormorant", "parrot", "loon", "gosling", "waterbird", "pheasant",
             "rooster", "sandpiper", "crow", "raven", "turkey", "oriole", "cowbird", "warbler", "magpie", "peacock",
             "cockatiel", "lorikeet", "puffin", "vulture", "condor", "macaw", "peafowl", "cockatoo", "songbird"),
    "cat": ("kitten", "feline", "tabby"),
    "dog": ("puppy", "beagle", "pup", "chihuahua", "schnauzer", "dachshund", "rottweiler", "canine", "pitbull",
            "collie", "pug", "terrier", "poodle", "labrador", "doggie", "doberman", "mutt", "doggy", "spaniel",
            "bulldog", "sheepdog", "weimaraner", "corgi", "cocker", "greyhound", "retriever", "brindle", "hound",
            "whippet", "husky"),
    "horse": ("colt", "pony", "racehorse", "stallion", "equine", "mare", "foal", "palomino", "mustang", "clydesdale",
              "bronc", "bronco"),
    "sheep": ("lamb", "ram", "goat", "ewe"),
    "cow": ("cattle", "oxen", "ox", "calf", "holstein", "heifer", "buffalo", "bull", "zebu", "bison"),
    "elephant": (),
    "bear": ("panda",),
    "zebra": (),
    "giraffe": (),
    "backpack": ("knapsack",),
    "umbrella": (),
    "handbag": ("wallet", "purse", "briefcase"),
    "tie": ("bow", "bow tie"),
    "suitcase": ("suit case", "luggage"),
    "frisbee": (),
    "skis": ("ski",),
    "snowboard": (),
    "sports ball": ("ball",),
    "kite": (),
    "baseball bat": (),
    "baseball glove": (),
    "skateboard": (),
    "surfboard": ("longboard", "skimboard", "shortboard", "wakeboard"),
    "tennis racket": ("racket",),
    "bottle": (),
    "wine glass": (),
    "cup": (),
    "fork": (),
    "knife": ("pocketknife", "knive"),
    "spoon": (),
    "bowl": ("container",),
    "banana": (),
    "apple": (),
    "sandwich": ("burger", "sub", "cheeseburger", "hamburger"),
    "orange": (),
    "broccoli": (),
    "carrot": (),
    "hot dog": (),
    "pizza": (),
    "donut": ("doughnut", "bagel"),
    "cake": ("cupcake", "shortcake", "coffeecake", "pancake"),
    "chair": ("seat", "stool"),
    "couch": ("sofa", "recliner", "futon", "loveseat", "settee", "chesterfield"),
    "potted plant": ("houseplant",),
    "bed": (),
    "dining table": ("table", "desk"),
    "toilet": ("urinal", "commode", "lavatory", "potty"),
    "tv": ("monitor", "televison", "television"),
    "laptop": ("computer", "notebook", "netbook", "lenovo", "macbook", "laptop computer"),
    "mouse": (),
    "remote": (),
    "keyboard": (),
    "cell phone": ("mobile phone", "phone", "cellphone", "telephone", "phon", "smartphone"),
    "microwave": (),
    "oven": ("stovetop", "stove", "stove top oven"),
    "toaster": (),
    "sink": (),
    "refrigerator": ("fridge", "freezer"),
    "book": (),
    "clock": (),
    "vase": (),
    "scissors": (),
    "teddy bear": ("teddybear",),
    "hair drier": ("hairdryer",),
    "toothbrush": (),
}

_CHAIR_ANIMALS = ("bird", "cat", "dog", "horse", "sheep", "cow", "elephant", "bear", "zebra", "giraffe", "animal", "cub")
# CHAIR's pairs of words read as one word, and the word each is read as (the same code): COCO's two-word names,
# and a few phrases whose second word alone would name something else ("train track" is no train, "home plate"
# no plate, a "baby bird" no person, a "passenger jet" no passenger). A pair read as a word outside CHAIR_SYNONYMS
# ("train track", "home plate", "motor bike") is then not counted at all. "stove top oven" is in CHAIR's list
# too, but its code looks at two words at a time, so it never matches.
CHAIR_WORD_PAIRS: Mapping[str, str] = {
    **{pair: pair for pair in (
        "motor bike", "motor cycle", "air plane", "traffic light", "street light", "traffic signal", "stop light",
        "fire hydrant", "stop sign", "parking meter", "suit case", "sports ball", "baseball bat", "baseball glove",
        "tennis racket", "wine glass", "hot dog", "cell phone", "mobile phone", "teddy bear", "hair drier",
        "potted plant", "laptop computer", "home plate", "train track")},
    **{f"{age} {animal}": animal for animal in _CHAIR_ANIMALS for age in ("baby", "adult")},
    "passenger jet": "jet", "passenger train": "train", "bow tie": "tie", "toilet seat": "toilet",
    "wine glas": "wine glass",
}
_CHAIR_WORD: dict[str, str] = {w: category for category, words in CHAIR_SYNONYMS.items()
                               for w in (category, *words)}
# What evidence calls CHAIR's own table, beside vocabulary names such as "coco-80".
CHAIR_TABLE = "coco-80 (CHAIR's synonym table)"


def chair_mentions(text: str, vocab: "Vocabulary | None" = None) -> list[tuple[str, str]]:
    """Every object word of ``text`` as CHAIR's released code reads it, in order, as (word, category).

    CHAIR lower-cases and tokenizes the text, makes each word singular, reads a pair of words it lists
    (``CHAIR_WORD_PAIRS``) as one, drops "seat" from a text that also says "toilet", and keeps the words of
    its synonym table, each occurrence. With ``vocab`` (a vocabulary of one's own names) the text is read for
    that vocabulary's names instead, every occurrence too (``Vocabulary.mentions``). Singulars come from this
    lexicon, not from the ``pattern`` package CHAIR used ("glasses" stays "glasses" here).
    """
    if vocab is not None:
        return vocab.mentions(text)
    words = text_words(text)
    read: list[str] = []
    i = 0
    while i < len(words):
        pair = " ".join(words[i:i + 2])
        if pair in CHAIR_WORD_PAIRS:
            read.append(CHAIR_WORD_PAIRS[pair])
            i += 2
        else:
            read.append(words[i])
            i += 1
    if "toilet" in read and "seat" in read:  # the seat of a toilet is no chair
        read = [w for w in read if w != "seat"]
    return [(w, _CHAIR_WORD[w]) for w in read if w in _CHAIR_WORD]
