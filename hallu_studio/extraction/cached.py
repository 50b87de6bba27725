"""A concept extractor that extracts each distinct text once: in memory for the run, and in a cache between runs.

Scoring reads the same texts many times: every line of a stateless file carries its image's reference caption
(seven models' captions of one image carry the same one), EMD, HalFscore and Tri-HE each read a sample's
reference, and a second run reads everything again. ``CachedExtractor`` answers a text it has seen from
memory, else from the cache (``caching.ScoringCache``: the store's, a cache file's), and sends the rest to the
extractor it wraps in ONE call. The cache key hashes the extractor's name, its configuration (its model, rules
or prompt versions: what shapes the concepts) and the text, so a changed extractor never reads stale concepts.
A failed extraction is never cached: the exception goes to the caller, and the next call asks again.

>>> from hallu_studio.caching import MemoryCache
>>> from hallu_studio.model import ObjectConcept
>>> class Upper:  # a toy extractor: every word is an object
...     name, calls = "upper", 0
...     def config(self): return {"extractor": "upper"}
...     def extract(self, texts):
...         Upper.calls += 1
...         return [ConceptSet(objects=[ObjectConcept(w) for w in t.split()]) for t in texts]
>>> ex = CachedExtractor(Upper(), MemoryCache())
>>> [c.to_dict()["objects"] for c in ex.extract(["cat dog", "cat dog", "sofa"])], Upper.calls
([['cat', 'dog'], ['cat', 'dog'], ['sofa']], 1)
>>> _ = ex.extract(["sofa", "cat dog"]); Upper.calls
1
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Sequence

from ..caching import CONCEPTS_NAMESPACE
from ..model import ConceptSet, content_key

if TYPE_CHECKING:
    from ..caching import ScoringCache
    from .base import ConceptExtractor


class CachedExtractor:
    """``extractor`` with each distinct text extracted once (memory, then ``cache``), the rest in one call.

    ``name`` and ``config()`` are the wrapped extractor's: scores keyed by them do not change.
    """

    def __init__(self, extractor: "ConceptExtractor", cache: "ScoringCache | None" = None, *,
                 memory_size: int = 100_000) -> None:
        self.extractor = extractor
        self.cache = cache
        self.memory_size = memory_size
        self._memory: OrderedDict[str, ConceptSet] = OrderedDict()
        self._lock = threading.Lock()
        self._identity: Any = None
        self.extracted = 0  # texts sent to the wrapped extractor (progress and tests read it)

    @property
    def name(self) -> str:
        return self.extractor.name

    def config(self) -> dict[str, Any]:
        return self.extractor.config()

    def key(self, text: str) -> str:
        """The content key of ``text``'s concepts under this extractor."""
        if self._identity is None:
            self._identity = [self.extractor.name, self.extractor.config()]
        return content_key(CONCEPTS_NAMESPACE, self._identity, text)

    def extract(self, texts: Sequence[str], *, persist: bool = True) -> list[ConceptSet]:
        """One concept set per text; ``persist``: keep what is extracted in the cache too (else in memory only:
        the store keeps its responses' concepts as their ``concepts`` scores)."""
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"text {i} is {type(text).__name__}, not str")
        distinct = list(dict.fromkeys(texts))
        with self._lock:
            found = {t: self._memory[t] for t in distinct if t in self._memory}
        missing = [t for t in distinct if t not in found]
        if missing and self.cache is not None:
            keys = {t: self.key(t) for t in missing}
            cached = self.cache.get_many(list(keys.values()))
            for text in missing:
                if keys[text] in cached:
                    found[text] = ConceptSet.from_dict(cached[keys[text]])
            self._remember({t: found[t] for t in missing if t in found})
            missing = [t for t in missing if t not in found]
        if missing:
            got = list(self.extractor.extract(missing))  # a failure propagates: nothing of it is kept
            if len(got) != len(missing):
                raise RuntimeError(f"extractor {self.name} returned {len(got)} concept sets for {len(missing)} texts")
            fresh = dict(zip(missing, got))
            self.extracted += len(fresh)
            found.update(fresh)
            self._remember(fresh)
            if persist and self.cache is not None and not self.cache.read_only:
                self.cache.put_many([(self.key(t), CONCEPTS_NAMESPACE, c.to_dict(with_spans=True))
                                     for t, c in fresh.items()])
        return [found[t] for t in texts]

    def _remember(self, concepts: dict[str, ConceptSet]) -> None:
        with self._lock:
            self._memory.update(concepts)
            while len(self._memory) > self.memory_size:
                self._memory.popitem(last=False)
