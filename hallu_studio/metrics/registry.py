"""Metric names -> metric classes, their specs and built metric objects.

A metric's identity (display name, tasks, headline number, the settings it depends on) is its class's
``spec`` (``metrics.spec.MetricSpec``); this module only knows where each class lives. Metric modules are
imported on first use.

>>> parse_metric_names("emd, chair")
['emd', 'chair']
>>> parse_metric_names("emd,bleu")
Traceback (most recent call last):
...
ValueError: unknown metric 'bleu'; known metrics: trihe, emd, edit, halfscore, reefknot, chair, mme, hallusionbench, pope, amber, accuracy
>>> parse_metric_names("emdd")
Traceback (most recent call last):
...
ValueError: unknown metric 'emdd' (did you mean 'emd'?); known metrics: trihe, emd, edit, halfscore, reefknot, chair, mme, hallusionbench, pope, amber, accuracy
>>> metric_spec("pope").tasks
('yes_no',)
"""

from __future__ import annotations

import importlib
import inspect
from typing import TYPE_CHECKING, Any, Callable

from ..components import Components
from ..config import Settings
from ..model import Sample
from ..names import unknown_name
from .base import Metric
from .spec import MetricSpec

if TYPE_CHECKING:
    from ..extraction.base import ConceptExtractor
    from ..caching import ScoringCache

# name -> (module under hallu_studio.metrics, class name), in the order the views list metrics and the Overview
# ranks by (a benchmark's runs are ranked by the first of these it has numbers for).
_METRIC_CLASSES: dict[str, tuple[str, str]] = {
    "trihe": ("trihe", "TriHEMetric"),
    "emd": ("emd", "EMDMetric"),
    "edit": ("evaluate_by_edit", "EvaluateByEditMetric"),
    "halfscore": ("halfscore", "HalFscoreMetric"),
    "reefknot": ("reefknot", "ReefknotMetric"),
    "chair": ("chair", "ChairMetric"),
    # MME's and HallusionBench's own scores rank their benchmarks before POPE's, which reads any yes/no question.
    "mme": ("mme", "MMEMetric"),
    "hallusionbench": ("hallusionbench", "HallusionBenchMetric"),
    "pope": ("pope", "PopeMetric"),
    "amber": ("amber", "AmberMetric"),
    "accuracy": ("answer_accuracy", "AnswerAccuracyMetric"),
}
METRIC_NAMES: tuple[str, ...] = tuple(_METRIC_CLASSES)

# The settings of the pipeline's concept extractor: they enter every metric's config key (``metrics.keys``).
EXTRACTOR_SETTINGS: tuple[str, ...] = ("scoring.extractor", "llm.model")


def _known(name: str) -> str:
    if name not in _METRIC_CLASSES:
        raise ValueError(f"unknown metric {name!r}; known metrics: {', '.join(METRIC_NAMES)}")
    return name


def parse_metric_names(text: str | list[str]) -> list[str]:
    """``"emd,edit"`` -> ``["emd", "edit"]``, refusing unknown names with the list of known ones."""
    names = [n.strip().lower() for n in (text.split(",") if isinstance(text, str) else text) if n.strip()]
    if not names:
        raise ValueError(f"no metric named; choose from {', '.join(METRIC_NAMES)}")
    for name in names:
        if name not in METRIC_NAMES:
            raise ValueError(unknown_name("metric", name, METRIC_NAMES, listing="known metrics"))
    return list(dict.fromkeys(names))


def metric_class(name: str) -> type:
    """The class of metric ``name`` (its module imported on first use)."""
    module_name, class_name = _METRIC_CLASSES[_known(name)]
    return getattr(importlib.import_module(f"{__package__}.{module_name}"), class_name)


def metric_spec(name: str) -> MetricSpec:
    """The spec of metric ``name``: its display name, tasks, headline number and settings."""
    return metric_class(name).spec


def metric_names() -> tuple[str, ...]:
    """The registered metrics' names, in registry order, as they stand now (a module that imported the tuple
    ``METRIC_NAMES`` holds it as it stood then)."""
    return METRIC_NAMES


def metric_specs() -> list[MetricSpec]:
    """Every metric's spec, in ``METRIC_NAMES`` order."""
    return [metric_spec(n) for n in METRIC_NAMES]


def spec_with(reader: str) -> MetricSpec | None:
    """The first registered metric whose spec carries ``reader`` (a field such as ``corrected_claims``), or None."""
    return next((spec for spec in metric_specs() if getattr(spec, reader) is not None), None)


def not_applicable_reason(name: str, sample: Sample) -> str | None:
    """Why metric ``name`` does not apply to ``sample``, or None when it does."""
    return metric_spec(name).not_applicable(sample)


def _build_emd(cls: type, parts: Components) -> Any:
    return cls(parts.encoder(), parts.extractor(), empty_side=parts.settings.scoring.emd_empty_side,
               ground_cost=parts.settings.scoring.emd_ground_cost)


# Builders for metrics whose class takes parts rather than settings; any other class
# is built with ``from_settings(settings, ...)`` if it has one, else with no arguments.
_BUILDERS: dict[str, Callable[[type, Components], Any]] = {"emd": _build_emd}


def _shared_parts(factory: Callable[..., Any], parts: Components) -> dict[str, Any]:
    """The keyword arguments among components / encoder / extract / reference_extract that ``factory`` accepts.

    ``extract`` (HalFscore) and ``reference_extract`` (Tri-HE) read a sample's dense reference caption with the
    pipeline's extractor, the one EMD reads it with (``reference_concepts_many``); the extractor is built when
    the first caption is read.
    """
    from .reference_concepts import CaptionConcepts

    params = inspect.signature(factory).parameters
    offered: dict[str, Callable[[], Any]] = {
        "components": lambda: parts,
        "encoder": parts.encoder,
        "extract": lambda: CaptionConcepts(parts.extractor),
        "reference_extract": lambda: CaptionConcepts(parts.extractor),
    }
    return {name: make() for name, make in offered.items() if name in params}


def _build(name: str, parts: Components) -> Metric:
    cls = metric_class(name)
    factory: Callable[..., Any] | None = getattr(cls, "from_settings", None)
    if factory is not None:
        return factory(parts.settings, **_shared_parts(factory, parts))
    if name in _BUILDERS:
        return _BUILDERS[name](cls, parts)
    return cls()


def make_metric(name: str, settings: Settings, cache: "ScoringCache | None" = None) -> Metric:
    """Build metric ``name`` under ``settings``; ``cache`` (optional: a store's ``Store.cache``, a cache file's)
    keeps phrase vectors and LLM answers."""
    return _build(name, Components(settings, cache))


def make_metrics(names: str | list[str], settings: Settings, cache: "ScoringCache | None" = None,
                 extractor: "ConceptExtractor | None" = None, *, components: Components | None = None) -> list[Metric]:
    """Build several metrics sharing one encoder and one extractor: those of ``components`` where given (whose
    settings must be ``settings``), else of new ones over ``cache`` and ``extractor`` (if given)."""
    if components is not None and components.settings is not settings:
        raise ValueError("make_metrics: the components were built from other settings")
    parts = components if components is not None else Components(settings, cache, extractor=extractor)
    return [_build(n, parts) for n in parse_metric_names(names)]


def make_extractor(settings: Settings, cache: "ScoringCache | None" = None) -> "ConceptExtractor":
    """The concept extractor the settings name (``scoring.extractor``; ``components.Components.extractor``)."""
    return Components(settings, cache).extractor()


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


def check_llm_configured(settings: Settings, metrics: list[str], *, extraction: bool = True,
                         reachable: bool = False) -> None:
    """Refuse at once (``LLMConfigError``, one line) settings whose LLM steps have no ``[llm]`` endpoint and model,
    or name a model the server does not list (``llm.endpoint.check_model``), before minutes of other work. With
    ``reachable`` (before scoring; not when a metric is only built, for its config key), an endpoint that is not
    there too (``llm.endpoint.check_reachable``: refused, timed out, not OpenAI-compatible)."""
    steps = llm_steps(settings, metrics, extraction=extraction)
    if not steps:
        return
    from ..llm import endpoint
    from ..llm.errors import LLMConfigError, not_configured

    if not settings.llm.configured:
        raise LLMConfigError(not_configured(settings.llm, steps, settings.source))
    endpoint.check_served(settings.llm, reachable=reachable)


def metrics_depending_on(setting: str) -> list[str]:
    """The metrics whose scores' config key ``setting`` (dotted) may enter: those whose spec lists it, and every
    metric for a setting of the concept extractor.

    >>> metrics_depending_on("scoring.unverifiable"), metrics_depending_on("scoring.batch_size")
    (['trihe', 'halfscore'], [])
    """
    if setting in EXTRACTOR_SETTINGS:
        return list(METRIC_NAMES)
    return [spec.name for spec in metric_specs() if setting in spec.settings]


