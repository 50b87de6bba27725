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
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Mapping, Sequence

from .forms import head_noun, normalize_name
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
NAMED_VOCABULARIES: tuple[str, ...] = ("coco-80",)


@dataclass(frozen=True)
class Vocabulary:
    """A closed set of object categories and the words that name each one (see the module docstring)."""

    name: str
    categories: tuple[str, ...]
    aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        table: dict[str, str] = {}
        for category in self.categories:
            for word in (category, *self.aliases.get(category, ())):
                table.setdefault(normalize_name(word) or word, category)
        object.__setattr__(self, "_table", table)

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


@lru_cache(maxsize=200_000)
def _category_of(vocab: Vocabulary, norm: str) -> str | None:
    table: dict[str, str] = vocab._table  # type: ignore[attr-defined]
    if not norm:
        return None
    if norm in table:
        return table[norm]
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


def vocabulary(spec: str | Sequence[str]) -> Vocabulary:
    """A vocabulary by name (``NAMED_VOCABULARIES``) or from a list of category names ("custom").

    Raises ``ValueError`` for an unknown name or an empty list.
    """
    if isinstance(spec, str):
        return _named(spec.strip().lower())
    names = tuple(dict.fromkeys(n.strip() for n in spec if isinstance(n, str) and n.strip()))
    if not names:
        raise ValueError("an object vocabulary needs at least one name")
    return Vocabulary("custom", names)
