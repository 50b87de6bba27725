"""A small offline reader of WordNet 3.0's database files, which ship with the package.

What the library needs: base forms ("mice" -> "mouse"), synsets in frequency order with
their words, hypernyms, antonyms, similar-to links and lexicographer files. The files are
Princeton's WordNet 3.0 as Debian's ``wordnet-base`` installs them, gzip-compressed in
``lexicon/wordnet30`` (``SHA256SUMS`` there gives the uncompressed files' digests), so
``pip install`` brings them and every machine scores with the same WordNet. ``$WORDNET_DIR``
overrides them with a folder of WordNet database files, plain or ``.gz`` (Debian's
``/usr/share/wordnet``, say): files identical to the shipped ones score identically and
share their config keys; other files key their scores apart (``lexicon_key_parts``); a folder
with none leaves ``load_wordnet()`` None, and callers fall back to the built-in lists (and
say so). NLTK's reader is not used: it requires a ``lexnames`` file, which Debian's package
does not ship; the 45 lexicographer file names are fixed by WordNet 3.0 and listed here.

Index lines read ``lemma pos synset_cnt p_cnt [ptr...] sense_cnt tagsense_cnt offset...``
with senses in frequency order; a data line at byte ``offset`` reads
``offset lex_filenum ss_type w_cnt(hex) word lex_id ... p_cnt [symbol offset pos source/target] ... | gloss``.

>>> wn = load_wordnet()
>>> wn.synset_name("couch") == wn.synset_name("sofa")
True
>>> wn.base_form("mice"), "cold" in wn.antonyms("hot"), wn.tag_count("stop", "v")
('mouse', True, 162)
>>> wordnet_source().origin, lexicon_key_parts()
('shipped', ())
"""

from __future__ import annotations

import gzip
import hashlib
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import IO

# WordNet 3.0 as the package ships it (see lexicon/wordnet30/README.md).
SHIPPED_DIR = Path(__file__).resolve().with_name("wordnet30")
VERSION = "WordNet 3.0"
POS_FILES: dict[str, str] = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
# Regular noun endings (WordNet's own "morphy" rules), tried after the exception list.
_NOUN_SUFFIXES: tuple[tuple[str, str], ...] = (("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"),
                                               ("shes", "sh"), ("men", "man"), ("ies", "y"), ("s", ""))

# Morphy's suffix rewrites in the order NLTK's reader tries them (its lemmatizer keeps the first of the shortest).
_MORPHY_RULES: dict[str, tuple[tuple[str, str], ...]] = {
    "n": (("s", ""), ("ses", "s"), ("ves", "f"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"),
          ("men", "man"), ("ies", "y")),
    "v": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", "")),
    "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "r": ()}


# WordNet 3.0's lexicographer files, by number (wndb(5WN): lexnames).
LEXNAMES: tuple[str, ...] = (
    "adj.all", "adj.pert", "adv.all", "noun.Tops", "noun.act", "noun.animal", "noun.artifact", "noun.attribute",
    "noun.body", "noun.cognition", "noun.communication", "noun.event", "noun.feeling", "noun.food", "noun.group",
    "noun.location", "noun.motive", "noun.object", "noun.person", "noun.phenomenon", "noun.plant",
    "noun.possession", "noun.process", "noun.quantity", "noun.relation", "noun.shape", "noun.state",
    "noun.substance", "noun.time", "verb.body", "verb.change", "verb.cognition", "verb.communication",
    "verb.competition", "verb.consumption", "verb.contact", "verb.creation", "verb.emotion", "verb.motion",
    "verb.perception", "verb.possession", "verb.social", "verb.stative", "verb.weather", "adj.ppl")
# Adjective satellites ("s") live in data.adj with the head adjectives.
_FILE_POS = {"n": "n", "v": "v", "a": "a", "s": "a", "r": "r"}
# A sense key's synset type digit (wndb(5WN): senseidx), satellites counted as adjectives.
_SS_TYPE_POS = {"1": "n", "2": "v", "3": "a", "4": "r", "5": "a"}


@dataclass(frozen=True)
class Synset:
    """One synset: its words, lexicographer file and pointers ``(symbol, offset, pos, source, target)``."""

    offset: int
    pos: str
    lexname: str
    words: tuple[str, ...]
    pointers: tuple[tuple[str, int, str, int, int], ...]

    @property
    def name(self) -> str:
        return f"{self.words[0] if self.words else '?'}.{self.pos}.{self.offset:08d}"

    def related(self, *symbols: str) -> list[tuple[int, str]]:
        """(offset, pos) of the synsets this one points to with any of ``symbols`` ("@" hypernym, "!" antonym)."""
        return [(off, pos) for sym, off, pos, _, _ in self.pointers if sym in symbols]


class WordNet:
    """Index and data files of one WordNet directory; data lines are read on demand."""

    def __init__(self, root: Path) -> None:
        self.root = root
        # Each data file's path as the synset reader's cache key, made once (a Path join per synset read cost more
        # than the read itself).
        self._data_paths = {pos: str(root / f"data.{name}") for pos, name in POS_FILES.items()}
        self._index: dict[str, dict[str, list[int]]] = {}
        self._exceptions: dict[str, dict[str, str]] = {}
        self._exception_lists: dict[str, dict[str, list[str]]] = {}
        self._tag_counts: dict[tuple[str, str], int] | None = None
        self._closures: dict[tuple[str, str, int], frozenset[int]] = {}

    def _load_index(self, pos: str) -> dict[str, list[int]]:
        if pos not in self._index:
            table: dict[str, list[int]] = {}
            with _open_text(self.root, f"index.{POS_FILES[pos]}") as fh:
                for line in fh:
                    if line.startswith(" "):
                        continue  # the licence header
                    parts = line.split()
                    n_synsets, n_pointers = int(parts[2]), int(parts[3])
                    offsets = parts[4 + n_pointers + 2:]
                    table[parts[0]] = [int(o) for o in offsets[:n_synsets]]
            self._index[pos] = table
        return self._index[pos]

    def _load_exceptions(self, pos: str) -> dict[str, str]:
        """Each irregular form's first base form (``_load_exception_lists`` has them all)."""
        if pos not in self._exceptions:
            self._exceptions[pos] = {form: bases[0] for form, bases in self._load_exception_lists(pos).items()}
        return self._exceptions[pos]

    def base_form(self, word: str, pos: str = "n") -> str | None:
        """The dictionary form of ``word`` that WordNet knows ("mice" -> "mouse"), or None."""
        key = word.strip().lower().replace(" ", "_")
        index = self._load_index(pos)
        exc = self._load_exceptions(pos).get(key)
        if exc and exc in index:
            return exc  # an irregular form ("men" -> "man") before the rare sense spelt the same
        if key in index:
            return key
        if pos == "n":
            for suffix, repl in _NOUN_SUFFIXES:
                if key.endswith(suffix) and key[:len(key) - len(suffix)] + repl in index:
                    return key[:len(key) - len(suffix)] + repl
        return None

    def morphy_shortest(self, word: str, pos: str = "n") -> str:
        """``word`` as NLTK's ``WordNetLemmatizer().lemmatize(word, pos)`` returns it: of the forms WordNet's morphy
        finds (an exception list's forms, else the word and its one-step suffix rewrites, else rewrites applied
        again), the shortest, the first of equal length; the word itself where none is found. Case is kept, and a
        capitalised word is no WordNet lemma ("Dogs" stays "Dogs"). AMBER's evaluator reads nouns this way, so
        "leaves" is "leaf" (not "leave") and "glasses" is "glass".
        """
        index = self._load_index(pos)
        rules = _MORPHY_RULES.get(pos, ())

        def rewrite(forms: list[str]) -> list[str]:
            return [f[:len(f) - len(old)] + new for f in forms for old, new in rules if f.endswith(old)]

        def known(forms: list[str]) -> list[str]:
            return [f for f in dict.fromkeys(forms) if f in index]

        exceptions = self._load_exception_lists(pos)
        if word in exceptions:
            found = known([word, *exceptions[word]])
        else:
            forms = rewrite([word])
            found = known([word, *forms])
            while not found and forms:
                forms = rewrite(forms)
                found = known(forms)
        return min(found, key=len) if found else word

    def _load_exception_lists(self, pos: str) -> dict[str, list[str]]:
        """Every base form the exception file gives each irregular form (``noun.exc``: "geese goose")."""
        if pos not in self._exception_lists:
            table: dict[str, list[str]] = {}
            name = f"{POS_FILES[pos]}.exc"
            if _has_file(self.root, name):
                with _open_text(self.root, name) as fh:
                    for line in fh:
                        parts = line.split()
                        if len(parts) >= 2:
                            table.setdefault(parts[0], []).extend(parts[1:])
            self._exception_lists[pos] = table
        return self._exception_lists[pos]

    def tag_count(self, lemma: str, pos: str = "n") -> int:
        """How often ``lemma`` was tagged with part of speech ``pos`` in WordNet's sense-tagged corpus (SemCor,
        ``cntlist.rev``), over all its senses: "stop" is a verb 162 times, a noun 11. 0 where the file is absent."""
        if self._tag_counts is None:
            counts: dict[tuple[str, str], int] = {}
            if _has_file(self.root, "cntlist.rev"):
                with _open_text(self.root, "cntlist.rev") as fh:
                    for line in fh:
                        # "stop%2:38:00:: 1 75": sense key (lemma%ss_type:...), sense number, tag count
                        parts = line.split()
                        if len(parts) == 3 and "%" in parts[0]:
                            word, rest = parts[0].split("%", 1)
                            key = (word, _SS_TYPE_POS.get(rest[:1], "?"))
                            counts[key] = counts.get(key, 0) + int(parts[2])
            self._tag_counts = counts
        return self._tag_counts.get((lemma.strip().lower().replace(" ", "_"), _FILE_POS.get(pos, pos)), 0)

    def synset_offsets(self, word: str, pos: str = "n") -> list[int]:
        base = self.base_form(word, pos)
        return list(self._load_index(pos).get(base, [])) if base else []

    def synset_words(self, offset: int, pos: str = "n") -> list[str]:
        """The words of the synset at ``offset`` (underscores become spaces)."""
        return list(self.synset(offset, pos).words)

    def synset_name(self, word: str, pos: str = "n") -> str | None:
        """The first (most frequent) synset of ``word`` as ``"<head word>.<pos>.<offset>"``, or None."""
        offsets = self.synset_offsets(word, pos)
        if not offsets:
            return None
        words = self.synset_words(offsets[0], pos)
        return f"{words[0] if words else word}.{pos}.{offsets[0]:08d}"

    def synset(self, offset: int, pos: str = "n") -> Synset:
        return _read_synset(self._data_paths[_FILE_POS[pos]], offset, _FILE_POS[pos])

    def synsets(self, word: str, pos: str = "n") -> list[Synset]:
        """``word``'s synsets, most frequent sense first."""
        return [self.synset(o, pos) for o in self.synset_offsets(word, pos)]

    def hypernym_closure(self, word: str, pos: str = "n", senses: int = 1) -> set[int]:
        """Offsets of every hypernym (instance hypernyms too) of ``word``'s first ``senses`` senses."""
        key = (word, pos, senses)
        if key not in self._closures:  # a word is asked about once per vocabulary category: walk it once
            seen: set[int] = set()
            todo = [s.offset for s in self.synsets(word, pos)[:senses]]
            while todo:
                for off, _ in self.synset(todo.pop(), pos).related("@", "@i"):
                    if off not in seen:
                        seen.add(off)
                        todo.append(off)
            self._closures[key] = frozenset(seen)
        return set(self._closures[key])

    def antonyms(self, word: str, pos: str = "a") -> set[str]:
        """Words WordNet marks as antonyms of ``word`` in any sense (through its head adjective for satellites)."""
        out: set[str] = set()
        for syn in self.synsets(word, pos):
            heads = [syn] + [self.synset(off, p) for off, p in syn.related("&")]
            for head in heads:
                for off, p in head.related("!"):
                    out.update(w.lower() for w in self.synset(off, p).words)
        return out

    def synonyms(self, word: str, pos: str) -> list[str]:
        """Other words of ``word``'s most frequent sense that has any (rarer senses drift: big -> bad)."""
        base = (self.base_form(word, pos) or word).replace("_", " ").lower()
        for offset in self.synset_offsets(word, pos):
            words = [w for w in self.synset_words(offset, pos) if w.lower() not in (base, word.lower())]
            if words:
                return list(dict.fromkeys(words))
        return []


def _has_file(root: Path, name: str) -> bool:
    return (root / name).exists() or (root / f"{name}.gz").exists()


def _open_text(root: Path, name: str) -> IO[str]:
    """``root/name``, or its gzip-compressed ``name.gz``, as text read line by line."""
    if (root / name).exists():
        return open(root / name, encoding="utf-8", errors="replace")
    return gzip.open(root / f"{name}.gz", "rt", encoding="utf-8", errors="replace")


@lru_cache(maxsize=8)
def _file_bytes(path: str) -> bytes:
    """A data file whole (the shipped ones are compressed, so lines are found by offset in memory: 22 MB)."""
    plain = Path(path)
    if plain.exists():
        return plain.read_bytes()
    with gzip.open(f"{path}.gz", "rb") as fh:
        return fh.read()


@lru_cache(maxsize=200_000)
def _read_synset(path: str, offset: int, pos: str) -> Synset:
    data = _file_bytes(path)
    end = data.find(b"\n", offset)
    parts = data[offset:end if end >= 0 else len(data)].decode("utf-8", errors="replace").split(" | ")[0].split()
    count = int(parts[3], 16)
    words = tuple(parts[4 + 2 * i].split("(")[0].replace("_", " ") for i in range(count))
    at = 4 + 2 * count
    n_pointers = int(parts[at])
    pointers = []
    for i in range(n_pointers):
        sym, off, ppos, st = parts[at + 1 + 4 * i: at + 5 + 4 * i]
        pointers.append((sym, int(off), _FILE_POS.get(ppos, ppos), int(st[:2], 16), int(st[2:], 16)))
    return Synset(offset, pos, LEXNAMES[int(parts[1])], words, tuple(pointers))


# The files the reader reads; all of them make a WordNet "the same" as the shipped one.
FILES: tuple[str, ...] = (*(f"{kind}.{pos}" for kind in ("index", "data") for pos in POS_FILES.values()),
                          *(f"{pos}.exc" for pos in POS_FILES.values()), "cntlist.rev")


@dataclass(frozen=True)
class WordNetSource:
    """Where the WordNet in force comes from: ``origin`` "shipped" (the package's own) or "WORDNET_DIR" (a
    user's folder); ``root`` None where that folder holds no WordNet; ``same_as_shipped``: its files are
    byte for byte the shipped ones (so its scores are the shipped WordNet's)."""

    origin: str
    root: Path | None
    same_as_shipped: bool

    def describe(self, paths: bool = True) -> str:
        """One line for ``info``, the app's Settings and the analyses' notes (``paths``: with the shipped folder's
        path, which differs between installs)."""
        if self.root is None:
            where = "the package's own files are missing" if self.origin == "shipped" else \
                f"WORDNET_DIR={os.environ.get('WORDNET_DIR', '')} holds no WordNet database files"
            return f"WordNet: none ({where}); names ground on the built-in word lists alone"
        if self.origin == "shipped":
            return f"WordNet: {VERSION}, shipped with hallu-studio" + (f" ({self.root})" if paths else "")
        same = (f"the same files as the {VERSION} shipped with hallu-studio" if self.same_as_shipped else
                f"not the {VERSION} shipped with hallu-studio: scores are kept under config keys of their own")
        return f"WordNet: {self.root} (from WORDNET_DIR; {same})"


def wordnet_dir() -> Path | None:
    """Where WordNet's database files are: ``$WORDNET_DIR`` where set, else the package's own; None where that
    folder holds none."""
    return _wordnet_dir_of(os.environ.get("WORDNET_DIR") or "")


@lru_cache(maxsize=16)
def _wordnet_dir_of(chosen: str) -> Path | None:
    # Looked up on every lexicon call (load_wordnet): the folder is checked once per $WORDNET_DIR value, not with
    # four stat calls each time (378k of them on 100 captions).
    path = Path(chosen) if chosen else SHIPPED_DIR
    return path if _has_file(path, "index.noun") and _has_file(path, "data.noun") else None


def wordnet_source() -> WordNetSource:
    """The WordNet in force and where it comes from (``WordNetSource``)."""
    root = wordnet_dir()
    if not os.environ.get("WORDNET_DIR"):
        return WordNetSource("shipped", root, root is not None)
    return WordNetSource("WORDNET_DIR", root, root is not None and _digests(str(root)) == shipped_digests())


def shipped_digests() -> dict[str, str]:
    """The SHA-256 of each shipped file, uncompressed (``wordnet30/SHA256SUMS``)."""
    lines = (SHIPPED_DIR / "SHA256SUMS").read_text(encoding="utf-8").splitlines()
    return {name: digest for digest, name in (line.split() for line in lines if line.strip())}


@lru_cache(maxsize=8)
def _digests(root: str) -> dict[str, str]:
    """The SHA-256 of each of ``FILES`` under ``root`` (uncompressed; "" where absent), once per folder and process."""
    out = {}
    for name in FILES:
        if not _has_file(Path(root), name):
            out[name] = ""
            continue
        h = hashlib.sha256()
        with (open(Path(root) / name, "rb") if (Path(root) / name).exists()
              else gzip.open(Path(root) / f"{name}.gz", "rb")) as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        out[name] = h.hexdigest()
    return out


@lru_cache(maxsize=4)
def _load(path: str) -> WordNet:
    return WordNet(Path(path))


def load_wordnet() -> WordNet | None:
    """The WordNet in force (shared per process), or None where ``$WORDNET_DIR`` names a folder without one."""
    path = wordnet_dir()
    return _load(str(path)) if path is not None else None


WORDNET_MISSING = ("WordNet is not available (WORDNET_DIR names a folder with no WordNet database files, or "
                   "hallu-studio's own copy was removed: unset WORDNET_DIR, or reinstall hallu-studio)")


def lexicon_key_parts() -> tuple[str, ...]:
    """What a score's config key adds for the lexicon that shaped it: nothing for the shipped WordNet 3.0 (or a
    ``$WORDNET_DIR`` with the same files), ``("no wordnet",)`` where there is none, ``("wordnet <digest>",)`` for
    a WordNet of other files.

    Without WordNet, synonyms, kinds, word forms and which nouns name things come from the built-in lists alone,
    and the numbers move a lot (the graph judge's Hallu_Q on Tri-HE's gold answers: 2.9 with it, 5.1 without), so
    scores made without it, or with another WordNet, are kept apart from those made with the shipped one, never
    mixed or resumed as the same.
    """
    source = wordnet_source()
    if source.root is None:
        return ("no wordnet",)
    if source.same_as_shipped:
        return ()
    digest = hashlib.sha256(repr(sorted(_digests(str(source.root)).items())).encode()).hexdigest()
    return (f"wordnet {digest[:16]}",)


def lexicon_note() -> str | None:
    """A sentence where the WordNet in force is not the shipped one (none, or other files), for the scoring
    pass's warnings and the app's banner; None where it is."""
    source = wordnet_source()
    if source.root is None:
        return (f"{WORDNET_MISSING}: names are grounded with the built-in word lists alone, so scores differ from "
                "those made with it (a store keeps them under config keys of their own)")
    if not source.same_as_shipped:
        return (f"WordNet from WORDNET_DIR={source.root} is not the {VERSION} shipped with hallu-studio: its scores "
                "may differ and are kept under config keys of their own")
    return None
