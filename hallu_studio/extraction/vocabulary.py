"""Word lists the offline extractor uses to keep only things that can be seen.

Kept in one place so that the decisions are reviewable: each list says why it exists.
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
})

# Collective nouns in "a group of people": the thing is the noun after "of".
QUANTIFIER_NOUNS: frozenset[str] = frozenset({
    "group", "couple", "pair", "number", "lot", "variety", "bunch", "array", "assortment", "handful",
    "collection", "series", "set", "kind", "type", "sort", "plenty", "range", "mix", "selection",
    "cluster", "multitude", "abundance", "piece", "few", "several", "majority", "dozen", "total",
    "row", "line", "body", "stack", "pile", "crowd", "herd", "flock", "bundle", "string", "gathering",
    "flow", "series",
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

# Nouns whose singular lemma is a different thing or no word ("pants" -> "pant", "glasses" -> "glass").
PLURAL_ONLY_NOUNS: frozenset[str] = frozenset({
    "pants", "glasses", "sunglasses", "eyeglasses", "jeans", "shorts", "trousers", "clothes", "scissors",
    "goggles", "leggings", "tights", "binoculars", "headphones", "earphones", "stairs", "remains", "surroundings",
})

# Colours and materials: nouns used as modifiers here describe ("plastic table" = table, plastic).
COLORS: frozenset[str] = frozenset({
    "red", "blue", "green", "yellow", "orange", "purple", "pink", "brown", "black", "white", "gray", "grey",
    "silver", "gold", "golden", "beige", "tan", "maroon", "navy", "teal", "turquoise", "violet", "cyan",
})
MATERIALS: frozenset[str] = frozenset({
    "wooden", "wood", "metal", "metallic", "plastic", "glass", "stone", "brick", "concrete", "leather",
    "ceramic", "marble", "steel", "iron", "paper", "cardboard", "fabric", "wicker", "rubber",
})
