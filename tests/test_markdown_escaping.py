"""Every text the app hands to Gradio as Markdown or as a toast goes through ``md`` / ``esc``.

A static scan of ``hallu_studio/app/**.py`` (``ast``), so that a new status line built with an
f-string from a user's text fails here before it reaches a browser. The sinks:

- ``gr.Markdown(...)``: each ``{value}`` of its f-string must be ``md(...)`` (``esc`` leaves
  ``![x](http://...)`` intact, which Markdown turns into an image);
- ``gr.Error`` / ``gr.Info`` / ``gr.Warning``: Gradio 6 renders the message as HTML, so ``esc`` or ``md``;
- what an event handler returns to a ``gr.Markdown`` output: every f-string (and every ``"..." + x``)
  in the handler and in the functions it calls, across the app's modules.

A value that is provably a number (``int()``, ``len()``, arithmetic with a number, a numeric format
spec, a choice between two literals) passes; anything else is named in ``ALLOWED`` with the reason.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

APP = Path(__file__).resolve().parents[1] / "hallu_studio" / "app"

MARKDOWN_SAFE = {"md"}
HTML_SAFE = {"md", "esc", "escape", "mistake_text"}  # escape: html.escape; mistake_text: esc() of a message (app.toasts)
NUMBERS = {"int", "len", "float", "round"}
TOAST = {"Error", "Info", "Warning"}
EVENTS = {"click", "submit", "change", "select", "tick", "load", "input", "blur", "then", "success", "on", "release"}

# (module, expression): why it is safe although no escape is written around it.
ALLOWED = {
    ("tabs/annotate.py", "message"): "_status's caller's Markdown; each caller's f-string is scanned here",
    ("tabs/browse.py", "shown"): "query(): 'none' or an f-string of two numbers, two lines above",
    ("tabs/browse.py", "message"): "query()'s status line, built from numbers and scanned here",
    ("tabs/inspect.py", "where"): "show(): an f-string of numbers one line above",
    ("tabs/inspect.py", "short_model_label(o['model'], o['synthetic'], name=names.get(o['run_id']))"):
        "a dropdown choice: plain text in Gradio",
    ("tabs/inspect.py", "o['run_id']"): "a dropdown choice: plain text in Gradio",
    ("tabs/run.py", "spec"): "a job title, shown by jobs_table through records_table_html (escaped HTML)",
    ("tabs/run.py", "benchmark"): "a job title, shown by jobs_table through records_table_html (escaped HTML)",
    # Browse's metric cells are HTML in a Dataframe (datatype "html"), escaped with esc(), not Markdown.
    ("tabs/browse.py", "esc(number(value))"): "a Dataframe HTML cell, escaped with esc()",
    ("tabs/browse.py", "shown_under"): "query(): an f-string whose one value is md() of the notes, two lines above",
    ("tabs/browse.py", "esc(repr(value))"): "a Dataframe HTML cell's title, escaped with esc()",
    ("tabs/browse.py", "esc(text)"): "a Dataframe HTML cell, escaped with esc()",
    ("tabs/browse.py", "esc(why)"): "a Dataframe HTML cell's title, escaped with esc()",
    ("tabs/browse.py", "reason"): "missing_reason()'s hover text: escaped by _missing_cell with esc()",
    ("tabs/browse.py", "gaps['undefined'][metric] or 'the metric gives no value here'"):
        "missing_reason()'s hover text: escaped by _missing_cell with esc()",
    ("tabs/browse.py", "metric"): "missing_reason()'s hover text: escaped by _missing_cell with esc()",
    ("tabs/browse.py", "failed[stage]"): "missing_reason()'s hover text: escaped by _missing_cell with esc()",
    ("tabs/browse.py", "order"): "query(): the title of one of the app's own sort columns (BY_KEY), a constant",
    ("tabs/browse.py", "max(100, 9 * len(str(c)) + 40)"): "a column width in pixels, a number",
    ("tabs/browse.py", "focus"): "query(): one of two fixed sentences the disagreement filter picks, a constant",
    ("tabs/settings.py", "k"): "save(): wrapped in md() as a whole one line below",
    ("tabs/settings.py", "name"): "settings_html(): a lexical resource's name in a row that records_table_html escapes",
    ("tabs/settings.py", "v"): "save(): wrapped in md() as a whole one line below",
}


def _called_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call):
        func = node.func
        return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    return None


def _is_number(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    if _called_name(node) in NUMBERS:
        return True
    if isinstance(node, ast.UnaryOp):
        return _is_number(node.operand)
    # a str cannot be added to, or multiplied by, a number without raising: arithmetic with a number is a number
    return isinstance(node, ast.BinOp) and (_is_number(node.left) or _is_number(node.right))


def _is_safe(node: ast.AST, escapes: set[str]) -> bool:
    if isinstance(node, ast.Constant) or _is_number(node) or _called_name(node) in escapes:
        return True
    if isinstance(node, ast.Name) and node.id.lstrip("_").isupper():
        return True  # a module constant: the app's own text
    if isinstance(node, ast.IfExp):
        return _is_safe(node.body, escapes) and _is_safe(node.orelse, escapes)
    if isinstance(node, ast.JoinedStr):
        return all(_is_safe(v, escapes) for v in node.values)
    if isinstance(node, ast.FormattedValue):
        spec = "".join(str(v.value) for v in getattr(node.format_spec, "values", []) if isinstance(v, ast.Constant))
        numeric = spec[-1:] in set("dfFeEgG%n") if spec else False
        return numeric or _is_safe(node.value, escapes)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _is_safe(node.left, escapes) and _is_safe(node.right, escapes)
    return False


def _is_concatenation(node: ast.AST) -> bool:
    """``"text" + x`` or ``f"..." + x``: a string built by adding."""
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and any(
        isinstance(s, ast.JoinedStr) or (isinstance(s, ast.Constant) and isinstance(s.value, str))
        for s in (node.left, node.right))


@dataclass
class Module:
    name: str  # relative to hallu_studio/app, e.g. "tabs/browse.py"
    tree: ast.Module
    functions: dict[str, list[ast.AST]] = field(default_factory=dict)  # every def in it, nested ones too
    markdown: set[str] = field(default_factory=set)  # names (and dataclass fields) holding a gr.Markdown


def _is_gradio(node: ast.AST, names: set[str]) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr in names and isinstance(node.value, ast.Name)
            and node.value.id == "gr")


def load(sources: dict[str, str]) -> dict[str, Module]:
    modules = {}
    for name, source in sources.items():
        mod = Module(name, ast.parse(source))
        for node in ast.walk(mod.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                mod.functions.setdefault(node.name, []).append(node)
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and _is_gradio(
                    node.value.func, {"Markdown"}):
                mod.markdown |= {t.id for t in node.targets if isinstance(t, ast.Name)}
            if isinstance(node, ast.AnnAssign) and _is_gradio(node.annotation, {"Markdown"}) and isinstance(
                    node.target, ast.Name):
                mod.markdown.add(node.target.id)
        modules[name] = mod
    return modules


def _arg(call: ast.Call, index: int, keyword: str) -> ast.AST | None:
    for kw in call.keywords:
        if kw.arg == keyword:
            return kw.value
    return call.args[index] if len(call.args) > index else None


def _mentions(node: ast.AST | None, names: set[str]) -> bool:
    if node is None:
        return False
    return any((isinstance(n, ast.Name) and n.id in names) or (isinstance(n, ast.Attribute) and n.attr in names)
               for n in ast.walk(node))


def _own_nodes(fn: ast.AST) -> list[ast.AST]:
    """What runs when ``fn`` runs: not the bodies of functions it defines (reached only if called), and not
    the messages of exceptions it raises (a toast shows those: the ``gr.Error`` check covers them)."""
    nodes, todo = [], [fn]
    while todo:
        node = todo.pop()
        nodes.append(node)
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.Raise)):
                todo.append(child)
    return nodes


def _callees(fn: ast.AST, mod: Module, modules: dict[str, Module]) -> list[tuple[Module, ast.AST]]:
    """The functions ``fn`` calls by name: in its own module, or ``tab.function`` in another module."""
    found = []
    for node in _own_nodes(fn):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name):
            found += [(mod, f) for f in mod.functions.get(func.id, [])]
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            for other in modules.values():
                if Path(other.name).stem == func.value.id:
                    found += [(other, f) for f in other.functions.get(func.attr, [])]
    return found


def _handler(call: ast.Call, mod: Module) -> list[ast.AST]:
    fn = _arg(call, 0, "fn")
    if isinstance(fn, ast.Lambda):
        return [fn]
    if isinstance(fn, ast.Name):
        return list(mod.functions.get(fn.id, []))
    return []


def problems(sources: dict[str, str]) -> list[str]:
    modules = load(sources)
    markdown = set().union(*(m.markdown for m in modules.values()))
    found: list[str] = []

    def check(mod: Module, node: ast.AST, escapes: set[str], what: str) -> None:
        if isinstance(node, ast.JoinedStr):
            parts = [v.value for v in node.values if isinstance(v, ast.FormattedValue) and not _is_safe(v, escapes)]
        elif _is_concatenation(node):
            parts = [s for s in (node.left, node.right) if not isinstance(s, (ast.BinOp, ast.JoinedStr))
                     and not _is_safe(s, escapes)]
        elif isinstance(node, (ast.Constant, ast.IfExp)) or node is None:
            parts = [] if node is None or _is_safe(node, escapes) else [node]
        else:
            parts = [] if _is_safe(node, escapes) else [node]
        for part in parts:
            source = ast.unparse(part)
            if (mod.name, source) not in ALLOWED:
                found.append(f"{mod.name}:{getattr(part, 'lineno', '?')}: {what} gets {{{source}}} unescaped")

    # 1. direct sinks; 2. handlers whose outputs include a gr.Markdown, and what they call
    reached: list[tuple[Module, ast.AST]] = []
    for mod in modules.values():
        for node in ast.walk(mod.tree):
            if not isinstance(node, ast.Call):
                continue
            if _is_gradio(node.func, {"Markdown"}):
                value = _arg(node, 0, "value")
                if value is not None:
                    check(mod, value, MARKDOWN_SAFE, "gr.Markdown")
            elif _is_gradio(node.func, TOAST):
                check(mod, _arg(node, 0, "message"), HTML_SAFE, f"gr.{node.func.attr}")
            elif isinstance(node.func, (ast.Attribute, ast.Name)) and _called_name(node) in EVENTS:
                if _mentions(_arg(node, 2, "outputs"), markdown):
                    reached += [(mod, fn) for fn in _handler(node, mod)]
    seen: set[int] = set()
    while reached:
        mod, fn = reached.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        for node in _own_nodes(fn):
            if isinstance(node, ast.JoinedStr) or _is_concatenation(node):
                check(mod, node, MARKDOWN_SAFE, f"Markdown from {getattr(fn, 'name', 'a lambda')}()")
        reached += _callees(fn, mod, modules)
    return sorted(set(found))


def app_sources() -> dict[str, str]:
    return {str(p.relative_to(APP)): p.read_text(encoding="utf-8") for p in sorted(APP.rglob("*.py"))}


def test_no_markdown_or_toast_gets_unescaped_text():
    found = problems(app_sources())
    assert not found, "untrusted text reaches Markdown / a toast without md() / esc():\n" + "\n".join(found)


def test_every_allowed_exception_is_still_there():
    # a stale allow-list entry would silently allow the next value of that name
    sources = app_sources()
    modules = load(sources)
    present = {(name, ast.unparse(n.value)) for name, m in modules.items() for n in ast.walk(m.tree)
               if isinstance(n, ast.FormattedValue)}
    present |= {(name, ast.unparse(n)) for name, m in modules.items() for n in ast.walk(m.tree)
                if isinstance(n, ast.Name)}
    assert set(ALLOWED) <= present, set(ALLOWED) - present


def test_the_scan_catches_what_issue_12_found():
    # Guards the guard: the three insertions the issue reproduced, as they were, each fail.
    tab = '''
import gradio as gr
from ..render.palette import md, esc
def build(ctx):
    status = gr.Markdown()
    prefer_status = gr.Markdown()
    def save(name):
        return [gr.update(), f"saved view **{name}**"]
    save_btn.click(save, [view_name], [saved_views, status])
    def after(rid, who, message):
        return [_status(ctx, who, message)]
    def on_rate(rid, who):
        return after(rid, who, f"rated {rid}")
    btn.click(on_rate, [current], [*view_outputs, status])
    def prefer(which, who):
        return f"recorded: {md(which)} by " + who
    left.click(lambda w, n: prefer(w, n), [a, b], [prefer_status])
    def fine(n, who):
        return f"{n + 1} of {len(who)}: {md(who)} {'a' if n else 'b'} {n:.2f}"
    ok.click(fine, [a], [status])
def _status(ctx, annotator, message):
    return f"**{annotator}**: {int(ctx.rated)} rated"
def toast(exc, name):
    raise gr.Error(f"no view named {name!r}: {esc(exc)}")
def toast2(exc):
    gr.Warning(str(exc))
    gr.Markdown(f"## {esc(exc)}")
'''
    found = problems({"tabs/hostile.py": tab})
    expected = ["save() gets {name}", "{rid}", "{who}", "{annotator}", "gr.Error gets {name}", "{str(exc)}",
                "{esc(exc)}"]
    for fragment in expected:
        assert any(fragment in f for f in found), (fragment, found)
    assert len(found) == len(expected), found  # and nothing of fine() (numbers, md, literals)
