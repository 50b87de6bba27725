"""The package's shape: no import circle between its modules, no import up the layers, no module too long to read,
no code only tests use.

Imports are read from the source (``ast``): those at module level, those inside functions, and those in
``if TYPE_CHECKING:`` blocks alike. An import inside a function still ties the two modules together, and a type
hint names a module a type checker must read: two modules whose hints name each other are a circle (the two that
came back in issue 35, ``backends.probe`` <-> ``probe_caption`` <-> ``probe_scene`` over ``ProbeOptions`` and
``components`` <-> ``judges.factory`` / ``metrics.evaluate_by_edit`` over ``Components``, went through here unseen
because ``TYPE_CHECKING`` imports were left out). Where a lower module needs a higher one's type, name what it
asks of it (a ``Protocol``, as ``judges.factory.JudgeParts``) or move the type down to its natural home.
Importing ``a.b.c`` also runs ``a/__init__`` and ``a/b/__init__``: a package counts as imported too.

``LAYERS`` is ``docs/architecture.md``'s layer table as data, bottom first: a module imports only from its own
layer or below. Packages are assigned whole (a new module in ``pipelines/`` is in the pipelines layer).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "hallu_studio"
MAX_LINES = 500
MAX_FUNCTION_LINES = 80
# Functions still longer (none left: issue 28's thin views); an entry here would be work left, and may only go.
LONG_FUNCTIONS_LEFT: set[str] = set()


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


# docs/architecture.md's layer table as data, bottom first: (its row, the level, the top-level modules and packages
# of hallu_studio the row holds). Rows of one level may import each other; a module imports nothing of a higher level.
LAYERS: tuple[tuple[str, int, tuple[str, ...]], ...] = (
    ("data model", 0, ("model",)),
    ("store", 1, ("store",)),
    ("config", 1, ("config", "config_edit")),
    ("presentation, names", 1, ("presentation", "names")),
    ("lexicon, grounding, references", 2, ("lexicon", "grounding", "concepts", "concept_matching", "vectors",
                                           "reference_scope")),
    ("caching", 3, ("caching",)),
    ("LLM access, embeddings", 3, ("llm", "embedding")),
    ("importers", 4, ("importers", "images", "sample")),
    ("extraction, judges, revision, backends", 4, ("extraction", "judges", "revision", "backends", "prompts")),
    ("components", 5, ("components",)),
    ("metrics", 6, ("metrics",)),
    ("annotation", 7, ("annotation",)),
    ("pipelines", 8, ("pipelines",)),
    ("studies", 9, ("studies", "resources")),
    ("CLI", 10, ("cli", "__main__")),
    ("app", 10, ("app",)),
)


def layer_of(module: str) -> tuple[str, int] | None:
    """(row, level) of a module of the package in ``LAYERS``, by its top-level module or package; None for the
    package itself (``hallu_studio/__init__``) or a module no row holds."""
    parts = module.split(".")
    if len(parts) < 2:
        return None
    for row, level, members in LAYERS:
        if parts[1] in members:
            return row, level
    return None


def _targets(module: str, path: Path, node: ast.AST, modules: dict[str, Path]) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    assert isinstance(node, ast.ImportFrom)
    if node.level:
        base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        base = base[:len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    # "from . import x" and "from .pkg import sub" name modules; "from .mod import name" names the module
    return [f"{target}.{a.name}" if f"{target}.{a.name}" in modules else target for a in node.names]


def import_edges() -> list[tuple[str, str, int]]:
    """``(module, a module of the package it imports, line)`` for every import, packages run on the way included."""
    modules = _modules()
    edges: list[tuple[str, str, int]] = []
    for module, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for target in _targets(module, path, node, modules):
                parts = target.split(".")
                for i in range(2, len(parts) + 1):  # the packages on the way, then the module itself
                    name = ".".join(parts[:i])
                    if name in modules and name != module and not module.startswith(name + "."):
                        edges.append((module, name, node.lineno))
    return edges


def import_graph() -> dict[str, set[str]]:
    """``{module: the package's modules it imports}``."""
    graph: dict[str, set[str]] = {m: set() for m in _modules()}
    for module, target, _ in import_edges():
        graph[module].add(target)
    return graph


def upward_imports(edges: list[tuple[str, str, int]]) -> list[str]:
    """``"module:line imports target (row -> higher row)"`` for each import from a lower level to a higher one."""
    out = []
    for module, target, line in edges:
        low, high = layer_of(module), layer_of(target)
        if low is not None and high is not None and high[1] > low[1]:
            out.append(f"{module}:{line} imports {target} ({low[0]} -> {high[0]})")
    return sorted(set(out))


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    import sys

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_cycles_finds_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_upward_imports_finds_an_import_up_the_layers():
    edges = [("hallu_studio.model.records", "hallu_studio.lexicon.vocabularies", 69),
             ("hallu_studio.metrics.trihe", "hallu_studio.components", 3),
             ("hallu_studio.judges.factory", "hallu_studio.judges.base", 9)]
    assert upward_imports(edges) == ["hallu_studio.model.records:69 imports hallu_studio.lexicon.vocabularies "
                                     "(data model -> lexicon, grounding, references)"]  # metrics -> components: down


def test_every_module_has_a_layer():
    assert [m for m in _modules() if m != "hallu_studio" and layer_of(m) is None] == []


def test_no_import_goes_up_the_layers():
    assert upward_imports(import_edges()) == []


def test_the_layers_are_the_ones_the_architecture_draws():
    """Every row of ``LAYERS`` is a row of ``docs/architecture.md``'s table naming its modules, in the same order."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = text[text.index("| layer | modules | rule |"):]
    rows = [line for line in table.splitlines() if line.startswith("| ")][1:]  # the rows below the header
    rows = rows[:next((i for i, r in enumerate(rows) if r.startswith("| module |")), len(rows))]
    by_name = {r.split("|")[1].strip().strip("*"): r for r in rows}
    assert list(by_name) == [row for row, _, _ in LAYERS]
    for row, _, members in LAYERS:
        for member in members:
            assert f"`{member}" in by_name[row], f"docs/architecture.md's row {row!r} does not name {member}"


def test_the_package_has_no_import_circle():
    graph = import_graph()
    assert graph["hallu_studio.metrics.emd"] >= {"hallu_studio.concepts", "hallu_studio.concept_matching"}
    assert "hallu_studio.metrics.halfscore" not in graph["hallu_studio.metrics.emd"], "EMD depends on HalFscore"
    assert cycles(graph) == []


def test_no_module_is_longer_than_it_can_be_read():
    long = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, long


def long_functions() -> dict[str, int]:
    """``{"path/under/package.py name": lines}`` of each function (methods and nested ones too) over the limit."""
    out = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1  # type: ignore[operator]
                if lines > MAX_FUNCTION_LINES:
                    out[f"{path.relative_to(PACKAGE).as_posix()} {node.name}"] = lines
    return out


def test_no_function_is_longer_than_it_can_be_read():
    long = long_functions()
    assert not set(long) - LONG_FUNCTIONS_LEFT, {k: n for k, n in long.items() if k not in LONG_FUNCTIONS_LEFT}
    # An entry whose function was split (or renamed) leaves the list, so that it cannot grow back unseen.
    assert not LONG_FUNCTIONS_LEFT - set(long), LONG_FUNCTIONS_LEFT - set(long)


def test_the_cli_and_the_metrics_import_without_the_slow_libraries_they_use_only_sometimes():
    """``openai`` (an LLM is configured) and ``inflect`` (a word is pluralised) take most of a second each to import;
    ``score --help`` and a ``score`` answered from its cache must not pay for them."""
    import subprocess
    import sys

    code = ("import sys, hallu_studio.cli, hallu_studio.metrics.registry, hallu_studio.judges.llm_judge, "
            "hallu_studio.lexicon.forms, hallu_studio.llm.client; "
            "print(sorted(m for m in ('openai', 'inflect') if m in sys.modules))")
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"})
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
    from hallu_studio.lexicon.forms import plural

    assert plural("leaf") == "leaves"  # and the engine is there once a word is formed


# The parts the settings name are built in ``components.py`` alone (issue 28); a caller asks ``Components``.
# Benchmarks that build their own on purpose: cold or naive timings of a fresh part, a part of another model.
BUILT_ELSEWHERE_ON_PURPOSE = {
    "hallu_studio/embedding.py LLMClient",  # a served embedding model's own endpoint, not ``[llm]``
    "benchmarks/bench_backends.py LLMClient",  # the client's own speed against a fake server, with its backoff
    "benchmarks/bench_cold_scoring.py Embedder",  # cold start: a fresh encoder and parser per timing
    "benchmarks/bench_cold_scoring.py ParserExtractor",
    "benchmarks/bench_emd.py Embedder",  # fresh encoders (cold phrase caches) and another model's
    "benchmarks/bench_emd.py ParserExtractor",
    "benchmarks/bench_encoder_threads.py Embedder",  # the model itself, for torch thread timings
    "benchmarks/bench_scoring.py ParserExtractor",  # the naive pipeline: forgetful parts, built fresh
}
BUILT_PARTS = ("Embedder", "ParserExtractor", "LLMClient")


def constructions(paths: list[Path]) -> set[str]:
    """``"path name"`` for each file under ROOT that calls one of ``BUILT_PARTS`` (a class built there)."""
    out = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                if name in BUILT_PARTS:
                    out.add(f"{path.relative_to(ROOT).as_posix()} {name}")
    return out


def test_the_encoder_parser_and_llm_client_are_built_in_components_alone():
    paths = [*PACKAGE.rglob("*.py"), *(ROOT / "benchmarks").glob("*.py"), ROOT / "app.py"]
    found = constructions(paths) - {f"hallu_studio/components.py {name}" for name in BUILT_PARTS}
    assert found <= BUILT_ELSEWHERE_ON_PURPOSE, sorted(found - BUILT_ELSEWHERE_ON_PURPOSE)
    assert not BUILT_ELSEWHERE_ON_PURPOSE - found, "an entry no longer built there leaves the list"
    assert constructions([PACKAGE / "components.py"]) == {f"hallu_studio/components.py {n}" for n in BUILT_PARTS}


# Public module-level functions nothing in the package nor app.py calls, each kept for the reason given; the list may
# only shrink. Code only tests or benchmarks use lives with them (tests/image_files.py, benchmarks/measured_with.py,
# scripts/metric_tables.py ...).
UNCALLED_ON_PURPOSE = {
    "annotation/__init__.py current_edit_reviews": "revision reviews in force, beside current_ratings (studies.md)",
    "annotation/__init__.py current_notes": "notes in force; the Annotate view's rewrite (issue 29) shows them",
    # Left by the app lanes of issue 29 (Inspect draws every metric's rows from its spec now): theirs to remove.
    "app/render/verdicts.py halfscore_html": "HalFscore's old panel, kept for its tests (issue 29's inspect lane)",
    "app/render/verdicts.py reefknot_html": "Reefknot's old panel, kept for its tests (issue 29's inspect lane)",
    "studies/people_judges.py response_beside": "one response beside people, for tests (issue 29's people lane)",
    "app/bootstrap.py bootstrap": "the demo set-up in one call (app.main runs its halves prepare_demo, finish_demo)",
    "config_edit.py describe_settings": "the settings of a file and environment, for scripts (docs/guide/settings.md)",
    "lexicon/predicates.py contrary_preposition": "the contrary relation the degradation bench writes (the judge's "
                                                  "contraries come from its table)",
    "llm/endpoint.py forget": "forgets what the process learnt of servers: tests and benches start fake ones",
    "metrics/aggregate.py bootstrap_ci": "bootstrap_intervals' one-number form, for scripts (docs/studies.md)",
    "metrics/reference_concepts.py concept_density": "VISCON Table 1 from Python (docs/guide/reproducing-papers.md)",
    "sample/synthetic.py render_scene": "the notebook helper the sample benchmark's docs show",
}


def _names_used(tree: ast.Module) -> set[str]:
    """Every name a module refers to: names, attributes, and identifiers written as strings (a Gradio callback
    named in a table, say), leaving out the strings of ``__all__`` (a re-export is not a use)."""
    exported = {id(n) for node in tree.body if isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets) for n in ast.walk(node)}
    used = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            used.add(node.id)
        elif isinstance(node, ast.Attribute):
            used.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in exported \
                and node.value.isidentifier():
            used.add(node.value)
    return used


def uncalled_functions() -> set[str]:
    """``"path/under/package.py name"`` of each public module-level function no module of the package (nor app.py)
    refers to; a docstring's example is not a use."""
    trees = {path: ast.parse(path.read_text(encoding="utf-8")) for path in [*PACKAGE.rglob("*.py"), ROOT / "app.py"]}
    used = set().union(*(_names_used(tree) for tree in trees.values()))
    return {f"{path.relative_to(PACKAGE).as_posix()} {node.name}" for path, tree in trees.items()
            if path.is_relative_to(PACKAGE) for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_")
            and node.name not in used}


def test_every_public_function_is_used_in_the_package():
    uncalled = uncalled_functions()
    assert not uncalled - set(UNCALLED_ON_PURPOSE), sorted(uncalled - set(UNCALLED_ON_PURPOSE))
    assert not set(UNCALLED_ON_PURPOSE) - uncalled, "now used (or gone): off the list"


def test_the_uncalled_check_can_fail(tmp_path):
    tree = ast.parse("def used():\n    return helper()\n\ndef helper():\n    '''>>> orphan()'''\n\n"
                     "def orphan():\n    pass\n__all__ = ['orphan']\n")
    names = _names_used(tree)
    assert "helper" in names and "orphan" not in names


def private_imports() -> set[str]:
    """``"module <- name"`` for each underscore name a module of the package imports from another: a name two
    modules share has a public home (its module's public name), so a reader knows it is meant to be shared."""
    out = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("hallu_studio")):
                out.update(f"{path.relative_to(PACKAGE).as_posix()} <- {a.name}" for a in node.names
                           if a.name.startswith("_") and not a.name.startswith("__"))
    return out


def test_no_module_imports_another_modules_private_names():
    assert private_imports() == set(), sorted(private_imports())
