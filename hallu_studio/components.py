"""The heavy parts the settings name, each built in this one place, once, on first use.

A scoring pass, the app and the benches ask one ``Components`` for the phrase encoder (``Embedder``), the offline
parser (``ParserExtractor``), the LLM client, the concept extractor ``scoring.extractor`` names, Tri-HE's claim
extractor and judge, and Evaluate-by-Edit's reviser; every metric built from the same ``Components`` shares them
(one model loaded, one phrase cache). Nothing is built until asked for: settings naming an LLM build no client
until a step needs one, and a pass that scores CHAIR alone never loads the encoder.

>>> from hallu_studio.config import Settings
>>> parts = Components(Settings())
>>> parts.parser() is parts.parser() and parts.extractor() is parts.parser()
True
>>> parts.encoder().model_name, parts.trihe_extractor() is None   # the pipeline's concepts serve Tri-HE
('all-MiniLM-L6-v2', True)
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Callable

from .config import Settings

if TYPE_CHECKING:
    from .caching import ScoringCache
    from .extraction.base import ConceptExtractor
    from .extraction.cached import CachedExtractor
    from .extraction.parser import ParserExtractor
    from .judges.base import PhraseEncoder, TripletJudge
    from .llm import LLMClient
    from .revision.reviser import Reviser


class Components:
    """The parts ``settings`` name, sharing ``cache`` (a store's ``Store.cache``, a cache file's, or None).

    ``encoder``, ``extractor`` and ``llm_client`` stand in for the built ones (a test's fake, a bench's counting
    encoder, the caller's own extractor); ``extractor`` is the pipeline's concept extractor, not the parser.
    """

    def __init__(self, settings: Settings | None = None, cache: "ScoringCache | None" = None, *,
                 encoder: "PhraseEncoder | None" = None, extractor: "ConceptExtractor | None" = None,
                 llm_client: "LLMClient | None" = None) -> None:
        self.settings = settings if settings is not None else Settings()
        self.cache = cache
        self._built: dict[str, Any] = {"encoder": encoder, "extractor": extractor, "llm_client": llm_client}
        self._lock = threading.RLock()  # the app's views and its background scoring may ask at once
        self._scoring: Components | None = None
        self._pipeline_extractor: Any = None  # ``scoring()``'s: the cached extractor in place of ``extractor()``

    def _once(self, name: str, build: Callable[[], Any]) -> Any:
        with self._lock:
            if self._built.get(name) is None:
                self._built[name] = build()
            return self._built[name]

    def encoder(self) -> "PhraseEncoder":
        """The phrase encoder ``scoring.embedding_model`` names, its vectors kept in the cache."""
        def build() -> Any:
            from .embedding import Embedder

            sc = self.settings.scoring
            return Embedder(sc.embedding_model, cache=self.cache, batch_size=sc.batch_size)
        return self._once("encoder", build)

    def parser(self) -> "ParserExtractor":
        """The offline scene-graph parser (spaCy)."""
        def build() -> Any:
            from .extraction.parser import ParserExtractor

            return ParserExtractor(batch_size=self.settings.scoring.batch_size)
        return self._once("parser", build)

    def llm_client(self) -> "LLMClient":
        """The ``[llm]`` endpoint's client, its answers kept in the cache."""
        def build() -> Any:
            from .llm.client import LLMClient

            return LLMClient(self.settings.llm, self.cache)
        return self._once("llm_client", build)

    def extractor(self) -> "ConceptExtractor":
        """The pipeline's concept extractor (``scoring.extractor``: parser or llm)."""
        if self._pipeline_extractor is not None:
            return self._pipeline_extractor

        def build() -> Any:
            kind = self.settings.scoring.extractor
            if kind == "parser":
                return self.parser()
            if kind == "llm":
                from .extraction.llm import LLMExtractor

                return LLMExtractor(self.llm_client(), model_name=self.settings.llm.model)
            raise ValueError(f"unknown extractor {kind!r}; choose 'parser' or 'llm'")
        return self._once("extractor", build)

    def cached_extractor(self) -> "CachedExtractor":
        """The pipeline's extractor with each distinct text extracted once, and kept in the cache between runs."""
        def build() -> Any:
            from .extraction.cached import CachedExtractor

            extractor = self.extractor()
            return extractor if isinstance(extractor, CachedExtractor) else CachedExtractor(extractor, self.cache)
        return self._once("cached_extractor", build)

    def scoring(self) -> "Components":
        """These parts with the pipeline's extractor cached: what a scoring pass builds its metrics from (EMD and
        the reference captions read through the cache). Everything else built is shared with these."""
        if self._scoring is None:
            with self._lock:
                if self._scoring is None:
                    view = Components.__new__(Components)
                    view.__dict__.update(self.__dict__)  # the same dict of built parts, the same lock
                    view._pipeline_extractor = self.cached_extractor()
                    view._scoring = view
                    self._scoring = view
        return self._scoring

    def trihe_extractor(self) -> "ConceptExtractor | None":
        """Tri-HE's own claim extractor (``scoring.trihe_extraction``), or None when the pipeline's concepts serve.

        "parser": the offline parser, which is the pipeline's extractor unless ``scoring.extractor`` names the
        LLM; "llm-trihe": Tri-HE's triplet prompt through ``[llm]``.
        """
        kind = self.settings.scoring.trihe_extraction
        if kind == "parser":
            return None if self.settings.scoring.extractor == "parser" else self.parser()
        if kind == "llm-trihe":
            def build() -> Any:
                from .extraction.llm import TRIHE_STYLE, LLMExtractor

                return LLMExtractor(self.llm_client(), style=TRIHE_STYLE, model_name=self.settings.llm.model)
            return self._once("trihe_extractor", build)
        raise ValueError(f"unknown scoring.trihe_extraction {kind!r}; choose parser or llm-trihe")

    def image_judge(self) -> Any:
        """The image judge ``scoring.vlm_judge_model`` names (``judges.vlm_judge.VLMJudge``), or None when unset:
        one for Tri-HE, HalFscore and the reviser, its answers kept in the cache."""
        if not (self.settings.scoring.vlm_judge_model or "").strip():
            return None
        from .judges.factory import build_image_judge

        return self._once("image_judge", lambda: build_image_judge(self.settings, cache=self.cache))

    def unsettled_image_judge(self) -> Any:
        """The image judge for what a reference leaves unverifiable (``scoring.vlm_judge_unsettled = "image"``, the
        default once ``scoring.vlm_judge_model`` is set), or None."""
        return self.image_judge() if self.settings.scoring.vlm_judge_unsettled == "image" else None

    def triplet_judge(self) -> "TripletJudge":
        """Tri-HE's judge (``scoring.trihe_judge``), built by ``judges.factory`` from these parts."""
        from .judges.factory import build_triplet_judge

        return self._once("triplet_judge", lambda: build_triplet_judge(self.settings, self))

    def reviser(self) -> "Reviser":
        """Evaluate-by-Edit's reviser (``scoring.reviser``: rule or llm); synonyms ("puppy" ~ "dog") match by the
        encoder (``revision.matching.ObjectMatcher``)."""
        def build() -> Any:
            from .revision.matching import ObjectMatcher

            matcher = ObjectMatcher(self.encoder())
            kind = self.settings.scoring.reviser
            if kind == "rule":
                from .revision.rule_reviser import SceneGraphRuleReviser

                return SceneGraphRuleReviser(self.parser(), matcher)
            if kind == "llm":
                from .revision.llm_reviser import LLMReviser

                return LLMReviser(self.llm_client(), matcher, model_name=self.settings.llm.model)
            raise ValueError(f"unknown reviser {kind!r}; choose 'rule' or 'llm'")
        return self._once("reviser", build)
