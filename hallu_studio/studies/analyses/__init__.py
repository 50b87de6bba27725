"""The papers' analyses as one-click studies: each a function of a store and settings.

``run_analysis(store, "length", settings, benchmark="tri-he")`` returns an
``AnalysisResult`` (table rows, a matplotlib figure, notes) that the CLI prints and
the app's Study view shows. Each analysis lives in its own module with ``NAME``,
``TITLE`` and ``analyse(store, settings, **options)``; modules are imported on
first use (some load spaCy or sentence-transformers).

Common options: ``benchmark`` (name), ``runs`` (run ids; default every non-derived
run), ``n_boot`` and ``seed`` for bootstrap intervals, ``limit`` (responses per run
for analyses that re-score in memory). See ``docs/analyses.md``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Callable

from ...config import Settings
from ...names import unknown_name
from .result import AnalysisResult

if TYPE_CHECKING:
    from ...store import Store

# name -> module under this package, in the order the papers present them.
MODULES: dict[str, str] = {
    "frequent-pairs": "frequent_pairs",
    "length": "length",
    "domain-shift": "domain_shift",
    "vocabulary-shift": "vocabulary_shift",
    "extractor-robustness": "extractor_robustness",
    "judge-agreement": "judge_agreement",
    "confidence-layers": "confidence_layers",
    "run-comparison": "run_comparison",
    "probe-validity": "probe_validity",
}

Analysis = Callable[..., AnalysisResult]


def _loader(module: str) -> Analysis:
    def run(store: "Store", settings: Settings, **options: Any) -> AnalysisResult:
        return importlib.import_module(f"{__name__}.{module}").analyse(store, settings, **options)
    run.__name__ = module
    return run


ANALYSES: dict[str, Analysis] = {name: _loader(module) for name, module in MODULES.items()}


def analysis_title(name: str) -> str:
    return str(importlib.import_module(f"{__name__}.{MODULES[_checked(name)]}").TITLE)


def _checked(name: str) -> str:
    if name not in ANALYSES:
        raise ValueError(unknown_name("analysis", name, ANALYSES, listing="known analyses"))
    return name


def run_analysis(store: "Store", name: str, settings: Settings | None = None, **options: Any) -> AnalysisResult:
    """Run analysis ``name`` on the store; unknown names are refused with the list of known ones."""
    return ANALYSES[_checked(name)](store, settings or Settings(), **options)


__all__ = ["ANALYSES", "AnalysisResult", "analysis_title", "run_analysis"]
