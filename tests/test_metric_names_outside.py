"""A metric is named in its own module, the registry and the docs: everything else loops over the specs.

What is left of the views that still name metrics is listed here, module by module, and may only shrink: a new
place that names a metric (a string literal such as ``"trihe"`` or ``"emd.total"`` outside docstrings) fails.
The papers' analyses (``studies/analyses/``) reproduce named figures of named papers and stay exempt; benchmark
names that happen to equal a metric's ("reefknot", "halfscore") are benchmark names, not metrics.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "hallu_studio"

# module (under hallu_studio/) -> the metrics it still names; each entry is work left for the spec-driven views.
STILL_NAMING: dict[str, set[str]] = {
    "app/bootstrap.py": {"emd", "edit", "trihe", "halfscore", "reefknot", "chair"},
    "app/render/plots.py": {"trihe", "edit", "reefknot", "emd"},
    "app/report.py": {"trihe", "emd", "reefknot", "chair"},
    "app/tabs/run.py": {"emd", "trihe"},
    "app/tabs/study_compute.py": {"trihe"},
    "cli/derive_cmd.py": {"pope"},
    "extraction/llm.py": {"trihe"},  # the prompt's name
    "judges/llm_judge.py": {"trihe"},  # the prompts' names
    "pipelines/scoring_jsonl.py": {"edit"},
    "studies/collect.py": {"trihe"},  # the judge-accuracy table reads Tri-HE's corrected claims
}
EXEMPT_PREFIXES = ("metrics/", "studies/analyses/", "importers/", "sample/", "lexicon/", "backends/probe_text.py")


def _metric_names() -> set[str]:
    from hallu_studio.metrics.registry import METRIC_NAMES

    return set(METRIC_NAMES)


def _named(path: Path, names: set[str]) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    # A bare name as a dict key or a subscript names a value ("accuracy" of a table row), not the metric.
    value_names = {id(k) for node in ast.walk(tree) if isinstance(node, ast.Dict) for k in node.keys if k is not None}
    value_names |= {id(node.slice) for node in ast.walk(tree) if isinstance(node, ast.Subscript)}
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            head = node.value.split(".")[0]
            if head in names and ("." in node.value or (node.value == head and id(node) not in value_names)):
                found.add(head)
    return found


def test_no_new_place_names_a_metric():
    names = _metric_names()
    new = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(EXEMPT_PREFIXES):
            continue
        extra = _named(path, names) - STILL_NAMING.get(rel, set())
        if extra:
            new[rel] = sorted(extra)
    assert not new, f"metric names outside their modules (read them from the specs instead): {new}"


def test_the_list_of_what_is_left_only_shrinks():
    names = _metric_names()
    stale = {rel: sorted(left - _named(PACKAGE / rel, names)) for rel, left in STILL_NAMING.items()
             if (PACKAGE / rel).exists() and left - _named(PACKAGE / rel, names)}
    assert not stale, f"these no longer name the metric: take them off STILL_NAMING {stale}"
