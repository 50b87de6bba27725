"""Metric names -> metric objects, and which samples each metric applies to.

Metric modules are imported only when asked for (some load models or spaCy), so
listing names or checking applicability costs nothing.

>>> parse_metric_names("emd, chair")
['emd', 'chair']
>>> parse_metric_names("emd,bleu")
Traceback (most recent call last):
...
ValueError: unknown metric 'bleu'; known metrics: emd, edit, trihe, halfscore, reefknot, chair, pope
>>> parse_metric_names("emdd")
Traceback (most recent call last):
...
ValueError: unknown metric 'emdd' (did you mean 'emd'?); known metrics: emd, edit, trihe, halfscore, reefknot, chair, pope
"""

from __future__ import annotations

import importlib
import inspect
from typing import TYPE_CHECKING, Any, Callable

from ..config import Settings
from ..model import Sample
from ..names import unknown_name
from .base import Metric

if TYPE_CHECKING:
    from ..extraction.base import ConceptExtractor
    from ..caching import ScoringCache

METRIC_NAMES: tuple[str, ...] = ("emd", "edit", "trihe", "halfscore", "reefknot", "chair", "pope")

# Tasks each metric reads; free-text metrics need a reference (scene graph or dense caption).
METRIC_TASKS: dict[str, tuple[str, ...]] = {
    "emd": ("caption", "vqa"),
    "edit": ("caption", "vqa"),
    "halfscore": ("caption", "vqa"),
    "chair": ("caption", "vqa"),
    "trihe": ("caption", "vqa"),
    "reefknot": ("yes_no", "mcq", "vqa"),
    "pope": ("yes_no",),
}

# name -> (module under hallu_studio.metrics, class name)
_METRIC_CLASSES: dict[str, tuple[str, str]] = {
    "emd": ("emd", "EMDMetric"),
    "edit": ("evaluate_by_edit", "EvaluateByEditMetric"),
    "trihe": ("trihe", "TriHEMetric"),
    "halfscore": ("halfscore", "HalFscoreMetric"),
    "reefknot": ("reefknot", "ReefknotMetric"),
    "chair": ("chair", "ChairMetric"),
    "pope": ("pope", "PopeMetric"),
}


def parse_metric_names(text: str | list[str]) -> list[str]:
    """``"emd,edit"`` -> ``["emd", "edit"]``, refusing unknown names with the list of known ones."""
    names = [n.strip().lower() for n in (text.split(",") if isinstance(text, str) else text) if n.strip()]
    if not names:
        raise ValueError(f"no metric named; choose from {', '.join(METRIC_NAMES)}")
    for name in names:
        if name not in METRIC_NAMES:
            raise ValueError(unknown_name("metric", name, METRIC_NAMES, listing="known metrics"))
    return list(dict.fromkeys(names))


def not_applicable_reason(name: str, sample: Sample) -> str | None:
    """Why metric ``name`` does not apply to ``sample``, or None when it does."""
    if name not in METRIC_TASKS:
        raise ValueError(f"unknown metric {name!r}; known metrics: {', '.join(METRIC_NAMES)}")
    if sample.task not in METRIC_TASKS[name]:
        return f"{name} does not score {sample.task} samples"
    if name == "trihe" and sample.scene_graph.is_empty() and not sample.gold_triplets \
            and not sample.reference_captions and sample.reference_objects is None:
        return "trihe needs a scene graph, reference triplets, reference captions or an object list"
    if name == "reefknot" and sample.relation_category is None:
        return "reefknot needs a relation question (a sample with a relation category)"
    return None


def _metric_class(name: str) -> type:
    module_name, class_name = _METRIC_CLASSES[name]
    try:
        module = importlib.import_module(f"{__package__}.{module_name}")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.endswith(f".{module_name}"):
            raise NotImplementedError(f"metric {name!r} is not supported yet: no module "
                                      f"hallu_studio.metrics.{module_name}") from exc
        raise
    try:
        return getattr(module, class_name)
    except AttributeError as exc:
        raise NotImplementedError(f"metric {name!r} is not supported yet: hallu_studio.metrics.{module_name} "
                                  f"has no {class_name}") from exc


class _Parts:
    """Heavy parts shared by the metrics built together (one embedder, one extractor)."""

    def __init__(self, settings: Settings, cache: "ScoringCache | None", extractor: Any = None) -> None:
        self.settings, self.cache = settings, cache
        self._embedder: Any = None
        self._extractor: Any = extractor

    def embedder(self) -> Any:
        if self._embedder is None:
            from ..embedding import Embedder

            self._embedder = Embedder(self.settings.scoring.embedding_model, cache=self.cache,
                                      batch_size=self.settings.scoring.batch_size)
        return self._embedder

    def extractor(self) -> Any:
        if self._extractor is None:
            self._extractor = make_extractor(self.settings, self.cache)
        return self._extractor


def _build_emd(cls: type, parts: _Parts) -> Any:
    return cls(parts.embedder(), parts.extractor(), empty_side=parts.settings.scoring.emd_empty_side,
               ground_cost=parts.settings.scoring.emd_ground_cost)


# Builders for metrics whose class takes parts rather than settings; any other class
# is built with ``from_settings(settings, cache=...)`` if it has one, else with no arguments.
_BUILDERS: dict[str, Callable[[type, _Parts], Any]] = {"emd": _build_emd}


def _shared_parts(factory: Callable[..., Any], parts: _Parts) -> dict[str, Any]:
    """The keyword arguments among cache / encoder / extract / reference_extract that ``factory`` accepts.

    ``extract`` (HalFscore) and ``reference_extract`` (Tri-HE) read a sample's dense reference caption with the
    pipeline's extractor, the one EMD reads it with (``reference_concepts_many``); the extractor is built when
    the first caption is read.
    """
    from .reference_concepts import CaptionConcepts

    params = inspect.signature(factory).parameters
    offered: dict[str, Callable[[], Any]] = {
        "cache": lambda: parts.cache,
        "encoder": parts.embedder,
        "extract": lambda: CaptionConcepts(parts.extractor),
        "reference_extract": lambda: CaptionConcepts(parts.extractor),
    }
    return {name: make() for name, make in offered.items() if name in params}


def _build(name: str, parts: _Parts) -> Metric:
    if name not in METRIC_NAMES:
        raise ValueError(f"unknown metric {name!r}; known metrics: {', '.join(METRIC_NAMES)}")
    cls = _metric_class(name)
    factory: Callable[..., Any] | None = getattr(cls, "from_settings", None)
    if factory is not None:
        return factory(parts.settings, **_shared_parts(factory, parts))
    if name in _BUILDERS:
        return _BUILDERS[name](cls, parts)
    return cls()


def make_metric(name: str, settings: Settings, cache: "ScoringCache | None" = None) -> Metric:
    """Build metric ``name`` under ``settings``; ``cache`` (optional: a store's ``Store.cache``, a cache file's)
    keeps phrase vectors and LLM answers."""
    return _build(name, _Parts(settings, cache))


def make_metrics(names: str | list[str], settings: Settings, cache: "ScoringCache | None" = None,
                 extractor: "ConceptExtractor | None" = None) -> list[Metric]:
    """Build several metrics sharing one embedder and one extractor (``extractor``, if given)."""
    parts = _Parts(settings, cache, extractor)
    return [_build(n, parts) for n in parse_metric_names(names)]


def make_extractor(settings: Settings, cache: "ScoringCache | None" = None) -> "ConceptExtractor":
    """The concept extractor the settings name (``scoring.extractor``)."""
    kind = settings.scoring.extractor
    if kind == "parser":
        from ..extraction import ParserExtractor

        return ParserExtractor(batch_size=settings.scoring.batch_size)
    if kind == "llm":
        from .. import extraction

        cls = getattr(extraction, "LLMExtractor", None)
        if cls is None:
            raise NotImplementedError("the LLM extractor is not supported yet")
        factory = getattr(cls, "from_settings", None)
        return factory(settings, cache=cache) if factory is not None else cls(settings)
    raise ValueError(f"unknown extractor {kind!r}; choose 'parser' or 'llm'")


def llm_steps(settings: Settings, metrics: list[str], *, extraction: bool = True) -> list[str]:
    """The settings that make scoring ``metrics`` ask the LLM, as ``"scoring.key = value"``.

    ``extraction``: whether the pipeline's extractor will be built from the settings (every scoring pass
    extracts concepts; a caller that hands in its own extractor passes False).

    >>> s = Settings(); s.scoring.trihe_judge = "llm"; s.scoring.reviser = "llm"
    >>> llm_steps(s, ["trihe", "emd"])
    ['scoring.trihe_judge = llm']
    """
    sc = settings.scoring
    wanted = [("scoring.extractor", sc.extractor == "llm" and extraction),
              ("scoring.trihe_judge", sc.trihe_judge == "llm" and "trihe" in metrics),
              ("scoring.trihe_extraction", sc.trihe_extraction == "llm-trihe" and "trihe" in metrics),
              ("scoring.reviser", sc.reviser == "llm" and "edit" in metrics),
              ("scoring.halfscore_matcher", sc.halfscore_matcher == "llm" and "halfscore" in metrics)]
    return [f"{name} = {getattr(sc, name.split('.')[1])}" for name, used in wanted if used]


def check_llm_configured(settings: Settings, metrics: list[str], *, extraction: bool = True) -> None:
    """Refuse at once (``LLMConfigError``, one line) settings whose LLM steps have no ``[llm]`` endpoint and model,
    or name a model the server does not list (``llm.endpoint.check_model``), before minutes of other work."""
    steps = llm_steps(settings, metrics, extraction=extraction)
    if not steps:
        return
    from ..llm import endpoint
    from ..llm.errors import LLMConfigError, not_configured

    if not settings.llm.configured:
        raise LLMConfigError(not_configured(settings.llm, steps, settings.source))
    endpoint.check_served(settings.llm)


def make_trihe_extractor(settings: Settings, cache: "ScoringCache | None" = None) -> "ConceptExtractor | None":
    """Tri-HE's own claim extractor (``scoring.trihe_extraction``), or None when the pipeline's concepts serve.

    "parser": the offline SceneGraphParser, which is the pipeline's extractor unless
    ``scoring.extractor`` names the LLM; "llm-trihe": Tri-HE's triplet prompt through ``[llm]``.
    """
    kind = settings.scoring.trihe_extraction
    if kind == "parser":
        if settings.scoring.extractor == "parser":
            return None
        from ..extraction import ParserExtractor

        return ParserExtractor(batch_size=settings.scoring.batch_size)
    if kind == "llm-trihe":
        check_llm_configured(settings, ["trihe"], extraction=False)
        from ..extraction.llm import LLMExtractor
        from ..llm.client import LLMClient

        return LLMExtractor(LLMClient(settings.llm, cache), style="trihe", model_name=settings.llm.model)
    raise ValueError(f"unknown scoring.trihe_extraction {kind!r}; choose parser or llm-trihe")
