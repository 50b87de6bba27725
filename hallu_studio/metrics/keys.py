"""The config key a score carries: its metric's own configuration plus the concept extractor's.

A metric's ``config()`` names everything that shapes its numbers (the settings its spec lists, in the form the
metric uses them, and its own rules' versions); the extractor's ``config()`` names how concepts were read. Changing
one metric's setting therefore changes that metric's key alone, and the next ``score`` recomputes that metric
only; batch sizes and where an LLM is served are in no key.

``current_config_keys(settings)`` gives the keys the settings in force would give, for the views that show "the
scores of the current settings" (``studies.in_force``): it builds the metrics (cheap: models load on first use)
once per distinct settings and process.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..lexicon.wordnet import lexicon_key_parts
from ..model import content_key

if TYPE_CHECKING:
    from ..config import Settings
    from ..extraction.base import ConceptExtractor
    from .base import Metric

CONCEPTS = "concepts"  # the extractor's own scores: a response's concepts, stored once and read by every metric


def metric_config_key(metric: "Metric", extractor: "ConceptExtractor") -> str:
    """The config key of ``metric``'s scores over concepts read by ``extractor``, and whether WordNet was missing
    (``lexicon.lexicon_key_parts``: without it names ground on the built-in lists alone)."""
    return content_key(metric.name, metric.config(), extractor.name, extractor.config(), *lexicon_key_parts())[:16]


def key_config(metric: "Metric", extractor: "ConceptExtractor") -> dict:
    """What ``metric_config_key`` hashes, as the store keeps it beside the key (to name configurations by what
    differs between them)."""
    return {"metric": metric.config(), "extractor": {"name": extractor.name, **extractor.config()}}


def concepts_config_key(extractor: "ConceptExtractor") -> str:
    """The config key of the concepts ``extractor`` reads (the ``concepts`` scores)."""
    return content_key(CONCEPTS, extractor.name, extractor.config(), *lexicon_key_parts())[:16]


@dataclass(frozen=True)
class ConfigKeys:
    """The config key each metric's scores get under some settings; ``problems``: the metrics that cannot be built
    under them here (a judge whose model is missing, an LLM not configured), with why."""

    keys: dict[str, str] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)

    def get(self, metric: str) -> str | None:
        return self.keys.get(metric)


def _fingerprint(settings: "Settings") -> str:
    """The settings as text, for the cache below (every field: a key may read any of them), and the lexicon's part."""
    return json.dumps([{k: v for k, v in dataclasses.asdict(settings).items() if k not in ("source", "origins")},
                       lexicon_key_parts()], sort_keys=True, default=str)


_CACHE: dict[str, ConfigKeys] = {}
_LOCK = threading.Lock()


def current_config_keys(settings: "Settings") -> ConfigKeys:
    """The config key of every metric (and of ``concepts``) under ``settings``, built once per distinct settings."""
    fingerprint = _fingerprint(settings)
    with _LOCK:
        if fingerprint in _CACHE:
            return _CACHE[fingerprint]
    keys = _compute(settings)
    with _LOCK:
        if len(_CACHE) > 16:
            _CACHE.clear()
        _CACHE[fingerprint] = keys
    return keys


def _compute(settings: "Settings") -> ConfigKeys:
    from ..components import Components
    from .registry import METRIC_NAMES, make_metrics

    out = ConfigKeys()
    parts = Components(settings)  # one encoder and extractor for every metric's key
    try:
        extractor = parts.extractor()
    except Exception as exc:  # noqa: BLE001 - whatever stops the extractor stops every metric: say it for each
        why = _problem(exc)
        out.problems.update({name: why for name in (CONCEPTS, *METRIC_NAMES)})
        return out
    out.keys[CONCEPTS] = concepts_config_key(extractor)
    for name in METRIC_NAMES:
        try:
            out.keys[name] = metric_config_key(make_metrics([name], settings, components=parts)[0], extractor)
        except Exception as exc:  # noqa: BLE001 - one metric that cannot be built here leaves the others be
            out.problems[name] = _problem(exc)
    return out


def _problem(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__

