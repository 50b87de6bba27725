"""A small offline reader of WordNet 3.0's database files (Debian's ``wordnet-base``).

Only what the analyses need: a noun's first (most frequent) synset, to group objects
as Tri-HE §5.3 does, and the synonyms of a word, for the vocabulary-shift study.
The files are read from ``$WORDNET_DIR`` or ``/usr/share/wordnet``; when they are
absent ``load_wordnet()`` returns None and callers fall back (and say so).

Index lines read ``lemma pos synset_cnt p_cnt [ptr...] sense_cnt tagsense_cnt offset...``
with senses in frequency order; a data line at byte ``offset`` reads
``offset lex_filenum ss_type w_cnt(hex) word lex_id ...``.

>>> wn = load_wordnet()                          # doctest: +SKIP
>>> wn.synset_name("couch") == wn.synset_name("sofa")   # doctest: +SKIP
True
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

DEFAULT_DIRS: tuple[str, ...] = ("/usr/share/wordnet", "/usr/local/share/wordnet")
POS_FILES: dict[str, str] = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
# Regular noun endings (WordNet's own "morphy" rules), tried after the exception list.
_NOUN_SUFFIXES: tuple[tuple[str, str], ...] = (("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"),
                                               ("shes", "sh"), ("men", "man"), ("ies", "y"), ("s", ""))


class WordNet:
    """Index and data files of one WordNet directory; data lines are read on demand."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._index: dict[str, dict[str, list[int]]] = {}
        self._exceptions: dict[str, dict[str, str]] = {}

    def _load_index(self, pos: str) -> dict[str, list[int]]:
        if pos not in self._index:
            table: dict[str, list[int]] = {}
            with open(self.root / f"index.{POS_FILES[pos]}", encoding="utf-8", errors="replace") as fh:
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
        if pos not in self._exceptions:
            table: dict[str, str] = {}
            path = self.root / f"{POS_FILES[pos]}.exc"
            if path.exists():
                with open(path, encoding="utf-8", errors="replace") as fh:
                    for line in fh:
                        parts = line.split()
                        if len(parts) >= 2:
                            table.setdefault(parts[0], parts[1])
            self._exceptions[pos] = table
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

    def synset_offsets(self, word: str, pos: str = "n") -> list[int]:
        base = self.base_form(word, pos)
        return list(self._load_index(pos).get(base, [])) if base else []

    def synset_words(self, offset: int, pos: str = "n") -> list[str]:
        """The words of the synset at ``offset`` (underscores become spaces)."""
        return list(_synset_words(str(self.root / f"data.{POS_FILES[pos]}"), offset))

    def synset_name(self, word: str, pos: str = "n") -> str | None:
        """The first (most frequent) synset of ``word`` as ``"<head word>.<pos>.<offset>"``, or None."""
        offsets = self.synset_offsets(word, pos)
        if not offsets:
            return None
        words = self.synset_words(offsets[0], pos)
        return f"{words[0] if words else word}.{pos}.{offsets[0]:08d}"

    def synonyms(self, word: str, pos: str) -> list[str]:
        """Other words of ``word``'s most frequent sense that has any (rarer senses drift: big -> bad)."""
        base = (self.base_form(word, pos) or word).replace("_", " ").lower()
        for offset in self.synset_offsets(word, pos):
            words = [w for w in self.synset_words(offset, pos) if w.lower() not in (base, word.lower())]
            if words:
                return list(dict.fromkeys(words))
        return []


@lru_cache(maxsize=100_000)
def _synset_words(path: str, offset: int) -> tuple[str, ...]:
    with open(path, "rb") as fh:
        fh.seek(offset)
        parts = fh.readline().decode("utf-8", errors="replace").split()
    count = int(parts[3], 16)
    # Adjectives may carry a syntactic marker such as "(a)" or "(p)".
    return tuple(parts[4 + 2 * i].split("(")[0].replace("_", " ") for i in range(count))


def wordnet_dir() -> Path | None:
    """Where WordNet's database files are, or None."""
    candidates = [os.environ["WORDNET_DIR"]] if os.environ.get("WORDNET_DIR") else list(DEFAULT_DIRS)
    for c in candidates:
        path = Path(c)
        if (path / "index.noun").exists() and (path / "data.noun").exists():
            return path
    return None


@lru_cache(maxsize=4)
def _load(path: str) -> WordNet:
    return WordNet(Path(path))


def load_wordnet() -> WordNet | None:
    """The WordNet of this machine (shared per process), or None when it is not installed."""
    path = wordnet_dir()
    return _load(str(path)) if path is not None else None


WORDNET_MISSING = ("WordNet is not available offline (install Debian's wordnet-base or set WORDNET_DIR to a "
                   "WordNet 3.0 dict directory)")
