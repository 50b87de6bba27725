"""The library's word lists: what is not a thing in the picture, what counts, what hedges.

Kept in one place so that the decisions are reviewable: each list says why it exists.
Every module that needs such a list imports it from here (extraction, CHAIR, the
judges, the probe, the reviser).
"""

from __future__ import annotations

# Words that describe the picture or the act of describing it, not a thing in it.
# On real LVLM dense captions these were the most frequent unmatched "objects".
FRAMING_NOUNS: frozenset[str] = frozenset({
    "image", "picture", "photo", "photograph", "scene", "setting", "background", "foreground",
    "environment", "atmosphere", "presence", "summary", "view", "shot", "frame", "composition",
    "overall", "depiction", "snapshot", "moment", "sight", "feel", "vibe", "ambiance", "ambience",
    "mood", "detail", "details", "element", "elements", "aspect", "focus", "center", "centre",
    "middle", "left", "right", "side", "bottom", "corner", "part", "portion", "area",
    "space", "location", "place", "spot", "variety", "number", "total", "sense", "style",
    "feature", "appearance", "look", "arrangement", "display", "context", "theme", "activity",
    "purpose", "attention", "interest", "impression", "contrast", "touch", "addition",
    "emphasis", "visual", "viewer", "perspective", "angle", "distance",
    "color", "colour", "tone", "texture", "pattern", "design", "shape", "size",
    "plenty", "type", "kind", "sort", "way", "thing", "something", "anything",
    "everything", "nothing", "someone", "somebody", "anyone", "everyone", "one", "ones",
    "other", "others", "rest", "time", "day", "use", "lighting", "position",
    # Positions and parts named only to place something else: "on top of", "the edge of".
    "front", "back", "top", "edge", "surrounding", "surroundings", "essence", "routine", "section",
    "item", "items", "vicinity", "distance", "direction", "backdrop",
    # Abstract nouns LLaVA uses for mood or activity, the most frequent unmatched "objects" after the
    # framing words on real DCI captions ("the hustle and bustle of city life", "for safety").
    "safety", "conversation", "combination", "beauty", "width", "height", "depth", "length", "hustle",
    "bustle", "excitement", "process", "point", "harmony", "life", "nature", "charm", "character",
    "experience", "enjoyment", "leisure", "relaxation", "fun", "sense", "history", "culture", "energy",
    "tranquility", "serenity", "interaction", "occasion", "event", "journey", "motion", "movement",
    # Inferences rather than things (Tri-HE answers): senses, seasons, times of day, modes.
    "mode", "transportation", "flavor", "flavour", "scent", "smell", "taste", "sound", "precaution",
    "content", "contents", "season", "spring", "summer", "autumn", "winter", "evening", "morning",
    "afternoon", "night", "daytime", "nighttime", "weather", "reason", "purpose", "possibility", "idea",
    "indoors", "outdoors", "indoor", "outdoor",
})

# Words that say where on a thing a part is: attributes of the part ("left hand", "rear window", "upper deck"),
# even where WordNet lists the pair as one noun of another kind ("right bank", "left wing", "front end").
POSITION_ADJECTIVES: frozenset[str] = frozenset({
    "left", "right", "front", "rear", "back", "upper", "lower", "top", "bottom", "middle", "inner", "outer",
    "central", "center", "centre", "side", "far", "near",
})

# Collective nouns in "a group of people": the thing is the noun after "of".
QUANTIFIER_NOUNS: frozenset[str] = frozenset({
    "group", "couple", "pair", "number", "lot", "variety", "bunch", "array", "assortment", "handful",
    "collection", "series", "set", "kind", "type", "sort", "plenty", "range", "mix", "selection",
    "cluster", "multitude", "abundance", "piece", "few", "several", "majority", "dozen", "total",
    "row", "line", "body", "stack", "pile", "crowd", "herd", "flock", "bundle", "string", "gathering",
    "flow", "series",
    "amount", "quantity",
    # Fractions: "half of the pizza" is about the pizza.
    "half", "halves", "quarter", "fraction",
})

# spaCy 3 lemmatises pronouns to themselves, so the parser's own "-PRON-" filter does nothing.
PRONOUNS: frozenset[str] = frozenset({
    "it", "its", "itself", "they", "them", "their", "theirs", "themselves", "this", "that", "these",
    "those", "which", "who", "whom", "whose", "what", "he", "him", "his", "she", "her", "hers",
    "we", "us", "our", "you", "your", "i", "me", "my", "one", "another", "each", "both", "all",
    "some", "any", "there", "here", "where", "whatever", "whichever", "either", "neither", "none",
})

RELATIVE_PRONOUNS: frozenset[str] = frozenset({"which", "who", "that", "whom"})

# Modifiers that count or hedge rather than describe (number is not an attribute here; see docs).
NON_ATTRIBUTES: frozenset[str] = frozenset({
    "several", "many", "few", "various", "numerous", "multiple", "some", "other", "different",
    "single", "couple", "more", "most", "much", "less", "least", "such", "own", "same", "certain",
    "possible", "likely", "main", "overall", "visible", "entire", "whole", "additional", "further",
    "particular", "specific", "similar", "distinct", "notable", "noticeable", "prominent",
    "various", "total", "next", "first", "second", "third", "last", "only", "also", "very",
    "-", "—", "–", "other", "several", "which", "what", "another", "each", "every", "any",
    # Words about where or whether something is seen, not what it looks like.
    "seen", "located", "present", "shown", "depicted", "captured", "positioned", "situated",
    "closer", "further", "farther", "left", "right", "top", "front", "bottom", "back", "center",
    "central", "middle", "nearby", "daily", "everyday", "able", "possibly", "available", "focal",
    # "used" alone says the thing serves a purpose; "used for X" is kept as a relation.
    "used",
})

# Predicates that state identity or membership ("X is a Y", "items, including Z"), not a relation.
NON_PREDICATES: frozenset[str] = frozenset({
    "is", "are", "be", "was", "were", "as", "like", "including", "include", "includes", "such as",
    "being", "become", "becomes", "seem", "seems", "appear", "appears",
})

# Adverbs that mark an appositive as a guess: "people in water, likely a river or a stream".
HEDGE_WORDS: frozenset[str] = frozenset({
    "likely", "possibly", "perhaps", "probably", "maybe", "presumably", "apparently", "seemingly",
    "potentially", "either",
})
# Words that make a whole sentence a guess rather than a report of what is seen ("the person might be
# commuting to work"): modal verbs and verbs of reasoning, beside the hedging adverbs above.
SPECULATION_WORDS: frozenset[str] = HEDGE_WORDS - {"either"} | frozenset({
    "might", "may", "could", "would", "should", "suggest", "suggests", "suggesting", "indicate", "indicates",
    "indicating", "imply", "implies", "assume", "guess", "speculate", "perhaps", "possible", "possibility",
    "unlikely", "considering", "given", "because", "since", "if", "typically", "usually", "often", "reason",
})

# Nouns whose singular lemma is a different thing or no word ("pants" -> "pant", "glasses" -> "glass").
# Those of two parts are counted in pairs ("two pairs of glasses"); the others not at all ("the eaves").
PAIR_NOUNS: frozenset[str] = frozenset({
    "pants", "glasses", "sunglasses", "eyeglasses", "jeans", "shorts", "trousers", "scissors", "goggles",
    "leggings", "tights", "binoculars", "headphones", "earphones",
})
PLURAL_ONLY_NOUNS: frozenset[str] = PAIR_NOUNS | frozenset({
    "clothes", "stairs", "remains", "surroundings", "eaves",
})

# Colours and materials: nouns used as modifiers here describe ("plastic table" = table, plastic).
COLORS: frozenset[str] = frozenset({
    "red", "blue", "green", "yellow", "orange", "purple", "pink", "brown", "black", "white", "gray", "grey",
    "silver", "gold", "golden", "beige", "tan", "maroon", "navy", "teal", "turquoise", "violet", "cyan",
})
MATERIALS: frozenset[str] = frozenset({
    "wooden", "metal", "metallic", "plastic", "glass", "stone", "brick", "concrete", "leather",
    "ceramic", "marble", "steel", "iron", "paper", "cardboard", "fabric", "wicker", "rubber",
})

NUMBER_WORDS: tuple[str, ...] = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                                 "ten", "eleven", "twelve")

# Nouns that take no number in a picture ("two grasses" is not English, "the sky" is not counted).
MASS_NOUNS: frozenset[str] = frozenset({
    "grass", "water", "sky", "snow", "sand", "dirt", "mud", "ground", "air", "smoke", "fog", "rain", "ice",
    "hair", "fur", "foliage", "greenery", "vegetation", "furniture", "food", "clothing", "sunlight",
    "gravel", "concrete", "pavement", "asphalt", "soil", "hay", "straw", "rice", "pasta", "bread",
    "cheese", "meat", "sauce", "soup", "milk", "coffee", "tea", "wine", "beer", "juice", "traffic", "luggage",
    "equipment", "scenery", "sunshine", "shade", "darkness", "ocean", "sea", "weather", "broccoli", "lettuce",
    "wallpaper", "flooring", "writing", "text", "graffiti", "paint", "rust", "moss", "ivy",
    "crema", "foam", "interior", "background",
})

# Words of a claim that make it an inference about the picture rather than something seen in it
# (Tri-HE Appendix C counts such claims: "used for transportation", "probably summer").
INFERENCE_PREDICATES: frozenset[str] = frozenset({
    "used for", "use for", "for", "meant for", "designed for", "intended for", "suggest", "suggests", "indicate",
    "indicates", "imply", "implies", "signify", "signifies", "mean", "means", "show", "shows", "help", "helps",
    "allow", "allows", "provide", "provides", "enjoy", "enjoys", "enjoying", "serve", "serves", "serving as",
    "purpose", "reason", "cause", "causes", "because of", "likely", "probably", "might", "may", "could",
    # Hedged copulas of the claims the parser makes about the whole picture ("it is probably summer").
    "is probably", "is likely", "is possibly", "is perhaps", "may be", "might be", "could be", "must be",
    "appears to be", "seems to be", "looks like",
})
# Words that give a reason ("flying because of the wind", "professional due to the uniforms"): a predicate
# holding one says why, which no scene graph shows.
CAUSAL_WORDS: frozenset[str] = frozenset({"because", "due", "since"})
# Words that deny what follows them ("not covering", "no crowd", "without a helmet").
NEGATIONS: frozenset[str] = frozenset({"not", "no", "never", "without", "lacking", "lacks", "n't", "cannot"})
# The subject of a claim about the whole picture rather than a thing in it: "it is probably summer"
# -> (scene, is probably, summer). A framing word, so never an object itself.
SCENE_SUBJECT = "scene"
# Lexicographer files of nouns that are never things one sees (WordNet's first senses).
NON_VISUAL_LEXNAMES: frozenset[str] = frozenset({
    "noun.attribute", "noun.cognition", "noun.feeling", "noun.motive", "noun.relation", "noun.time",
    "noun.act", "noun.event", "noun.process", "noun.state", "noun.communication", "noun.quantity",
    "noun.possession"})
# Lexicographer files of abstract nouns: a noun all of whose first senses sit here names no thing one could
# point at ("posture", "likelihood", "readiness", "identity"). Narrower than NON_VISUAL_LEXNAMES: acts,
# events and communication ("sign", "text", "wave", "game") are often seen, so they stay objects.
ABSTRACT_LEXNAMES: frozenset[str] = frozenset({
    "noun.attribute", "noun.cognition", "noun.feeling", "noun.motive", "noun.state", "noun.relation", "noun.time",
    "noun.possession"})
# Nouns WordNet files as abstract whose sense in a picture description is a thing ("three levels", "fish scales").
VISIBLE_ABSTRACT_NOUNS: frozenset[str] = frozenset({"level", "scale", "finish", "price", "gradient", "shade",
                                                    "darkness", "shadow", "stripe", "spot"})
# Lexicographer files of nouns that name things one can see.
VISUAL_LEXNAMES: frozenset[str] = frozenset({
    "noun.artifact", "noun.animal", "noun.person", "noun.plant", "noun.food", "noun.object", "noun.body",
    "noun.substance", "noun.location", "noun.group", "noun.shape", "noun.phenomenon"})
