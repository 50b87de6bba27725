"""Scene graphs and response concept graphs as pyvis networks, shown in a sandboxed iframe.

pyvis inlines vis.js (``cdn_resources="in_line"``); its template still links
Bootstrap from a CDN, which is stripped, and a Content-Security-Policy forbids any
request from inside the frame. The frame is ``sandbox="allow-scripts"`` without
``allow-same-origin``: even a hostile label could not reach the app's page.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from jinja2 import Environment, FileSystemLoader
from pyvis.network import Network

from ...lexicon.forms import count_of
from ...model import SceneGraph, canonical_json
from .concepts import object_names
from .instances import same_name_instances
from .layout import Box, Link, layout
from .palette import (HALLUCINATED, SUPPORTED, TRIHE_TO_VERDICT, UNCERTAIN, VERDICT_COLOURS, claim_label, empty_note,
                      esc)

_NEUTRAL = "#7a9cc6"
_CDN_TAGS = re.compile(r"<link[^>]*https?://[^>]*>|<script[^>]*src=\"https?://[^>]*>\s*</script>", re.S)
_CSP = ('<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        'script-src \'unsafe-inline\'; style-src \'unsafe-inline\'; img-src data:; font-src data:">')


@lru_cache(maxsize=1)
def _template_env(template_dir: str) -> Environment:
    # pyvis builds a fresh jinja Environment per network and recompiles its template
    # (with vis.js inlined) every time: ~50 ms. One shared Environment compiles it once.
    return Environment(loader=FileSystemLoader(template_dir))


# pyvis's page has body margins, an empty heading and a bordered card: in a frame of the
# graph's own height they push the canvas's lower part out of view.
_FRAME_CSS = ("<style>body{margin:0;overflow:hidden} center{display:none} .card{border:0!important;margin:0}"
              " #mynetwork{border:0!important}</style>")


# Nodes are placed in Python (``layout.layout``: no box over another or over an edge label) and stay where they
# are put: no physics. Straight edges keep each label at its edge's middle, where the layout left room for it.
_OPTIONS = ('{"physics": {"enabled": false}, '
            '"edges": {"font": {"size": 15, "align": "horizontal", "strokeWidth": 5}, '
            '"arrows": {"to": {"scaleFactor": 0.6}}, "smooth": false}, '
            '"nodes": {"font": {"size": 20}, "margin": 8}, "interaction": {"hover": true}}')
# The width over the height of the frames the graphs are drawn in: Inspect shows them side by side, each about as
# high as wide (418 x 450 px at 1,400 px). A layout of that shape fits them at a zoom that keeps labels legible.
_FRAME_ASPECT = 0.7
# The graph always fits its frame whole (nothing cut at an edge: a zoom floor once left a dense graph's sides
# outside); legibility comes from the layout's shape (``_FRAME_ASPECT``) and its wrapped labels.
_MAX_SCALE = 1.0  # a small graph is not blown up past its own size
# A dense graph gets a taller frame (up to ``_MAX_FRAME``): the height it needs when fitted to the width of an
# Inspect panel in a 1,400 px window (a wider window has room to spare). The page says it; ``graph_iframe`` reads it.
_PANEL_WIDTH, _MIN_FRAME, _MAX_FRAME = 410, 460, 760
_HEIGHT_META = '<meta name="hs-frame-height" content="{}">'
_HEIGHT_FOUND = re.compile(r'<meta name="hs-frame-height" content="([0-9]+)">')
_FIT_SCRIPT = ("<script>(function () {"
               " function fit() { network.fit({animation: false});"
               f" if (network.getScale() > {_MAX_SCALE}) {{ network.moveTo({{scale: {_MAX_SCALE}}}); }} }}"
               " window.addEventListener('resize', fit); fit();"
               # A frame drawn while hidden (a closed panel, a tab not shown) has no size yet: fit once it has.
               " if (window.ResizeObserver) { new ResizeObserver(function () {"
               " if (document.getElementById('mynetwork').clientWidth > 0) { fit(); } })"
               ".observe(document.getElementById('mynetwork')); }"
               "})();</script>")
_OBJECT_FONT, _ATTRIBUTE_FONT, _EDGE_FONT = 20, 16, 15
_ATTRIBUTE_MARGIN = 5
# An attribute value sits a short edge away from its object; this edge has no label.
_COPULAS = frozenset({"is", "are", "was", "were", "be", "is a", "are a"})
_WRAP = 12  # characters per line of a reference object's attribute list: narrow boxes fit a side-by-side panel


def _network() -> Network:
    # the canvas fills its frame, whose height ``graph_iframe`` sets (from the page's ``_HEIGHT_META``)
    net = Network(height="100vh", width="100%", directed=True, cdn_resources="in_line")
    net.templateEnv = _template_env(net.template_dir)
    net.set_options(_OPTIONS)
    return net


def _html(net: Network, frame_height: int) -> str:
    page = net.generate_html()
    page = _CDN_TAGS.sub("", page)
    page = page.replace("<head>", "<head>" + _CSP + _FRAME_CSS + _HEIGHT_META.format(frame_height), 1)
    return page.replace("</body>", _FIT_SCRIPT + "</body>", 1)


def _tooltip(*lines: str) -> str:
    # vis.js shows a string title as HTML: escape it, and keep it plain text.
    return esc("\n".join(lines))


def _wrapped(words: list[str], width: int = _WRAP) -> str:
    """Words joined with " · ", broken onto lines of about ``width`` characters (every one kept)."""
    lines, line = [], ""
    for w in words:
        piece = w if not line else f"{line} · {w}"
        if line and len(piece) > width:
            lines.append(line)
            line = w
        else:
            line = piece
    return "\n".join(lines + ([line] if line else []))


def _draw(net: Network, boxes: list[Box], links: list[tuple[Link, dict[str, Any]]],
          node_options: dict[str, dict[str, Any]]) -> int:
    """Add the nodes where ``layout`` puts them (fixed), then the edges; returns the frame height (px) in which the
    drawing, fitted to a panel ``_PANEL_WIDTH`` wide, is not shrunk further by the frame's height."""
    pos = layout(boxes, [link for link, _ in links], aspect=_FRAME_ASPECT)
    for box in boxes:
        x, y = pos[box.id]
        net.add_node(box.id, label=box.label, x=x, y=y, physics=False, **node_options[box.id])
    for link, options in links:
        net.add_edge(link.source, link.target, label=link.label or None, **options)
    width = max(pos[b.id][0] + b.size[0] / 2 for b in boxes) - min(pos[b.id][0] - b.size[0] / 2 for b in boxes)
    height = max(pos[b.id][1] + b.size[1] / 2 for b in boxes) - min(pos[b.id][1] - b.size[1] / 2 for b in boxes)
    scale = min(_MAX_SCALE, _PANEL_WIDTH / max(width, 1.0))
    return int(min(_MAX_FRAME, max(_MIN_FRAME, height * scale + 24)))


def _parallel(edges: dict[tuple[str, str, str], Any]) -> dict[frozenset[str], list[tuple[str, str, str]]]:
    """Edges between the same two nodes (either way), grouped: drawn as one edge with a line per predicate, so that
    their labels cannot sit on each other."""
    groups: dict[frozenset[str], list[tuple[str, str, str]]] = {}
    for s_, p_, o_ in edges:
        groups.setdefault(frozenset((s_, o_)), []).append((s_, p_, o_))
    return groups


def scene_graph_html(graph: SceneGraph) -> str:
    """A full HTML page drawing the reference scene graph: every object with all its attributes under its name.

    Kept for the last pages drawn: the models' responses to one sample (and a scene's styled variants) share it."""
    return _scene_graph_page(canonical_json(graph.to_dict()))


@lru_cache(maxsize=64)
def _scene_graph_page(graph_json: str) -> str:
    graph = SceneGraph.from_dict(json.loads(graph_json))
    net = _network()
    names = [o.name for o in graph.objects]
    boxes, options = [], {}
    for o in graph.objects:
        # a repeated name is told apart by its id, as the report's drawing does
        name = o.name if names.count(o.name) == 1 else f"{o.name} ({o.id})"
        label = name if not o.attributes else f"{name}\n{_wrapped([str(a) for a in o.attributes])}"
        boxes.append(Box(f"o:{o.id}", label, _OBJECT_FONT))
        options[f"o:{o.id}"] = {"title": _tooltip(o.name, *o.attributes), "color": _NEUTRAL, "shape": "box"}
    known = {o.id for o in graph.objects}
    triples = {(r.subject, r.predicate, r.object): None for r in graph.relations
               if r.subject in known and r.object in known}
    links = []
    for group in _parallel(triples).values():
        s_, _, o_ = group[0]
        label = "\n".join(p_ if (a, b) == (s_, o_) else f"{p_} (←)" for a, p_, b in group)
        arrows = "to" if all((a, b) == (s_, o_) for a, _, b in group) else "to, from"
        links.append((Link(f"o:{s_}", f"o:{o_}", label, _EDGE_FONT),
                      {"title": _tooltip(*(f"{a} {p_} {b}" for a, p_, b in group)), "arrows": arrows}))
    return _html(net, _draw(net, boxes, links, options))


def _worse(a: str | None, b: str) -> str:
    order = {None: 0, SUPPORTED: 1, UNCERTAIN: 2, HALLUCINATED: 3}
    return b if order.get(b, 0) > order.get(a, 0) else a  # type: ignore[return-value]


def claim_kind(claim: dict[str, Any], attribute_pairs: set[tuple[str, str]] | frozenset = frozenset()) -> str:
    """What a Tri-HE claim is about: "attribute", "count", "relation", "object" or "inference".

    The judge's own ``kind`` where it gave one; else a copula claim whose object is one of the subject's
    extracted attributes is an attribute, one whose object is a number a count, anything else a relation.

    >>> claim_kind({"triplet": ["flag", "is", "pink"], "kind": "attribute"})
    'attribute'
    >>> claim_kind({"triplet": ["dog", "is", "two"]})
    'count'
    >>> claim_kind({"triplet": ["cup", "is", "red"]}, {("cup", "red")}), claim_kind({"triplet": ["cup", "on", "mat"]})
    ('attribute', 'relation')
    """
    kind = str(claim.get("kind") or "")
    if kind:
        return kind
    parts = [str(x) for x in claim.get("triplet") or []]
    if len(parts) == 3 and parts[1].strip().lower() in _COPULAS:
        if count_of(parts[2]) is not None:
            return "count"
        if (parts[0].lower(), parts[2].lower()) in attribute_pairs:
            return "attribute"
    return "relation"


def _attribute_pairs(concepts: dict[str, Any] | None) -> set[tuple[str, str]]:
    return {(str(p[0]).lower(), str(p[1]).lower()) for p in (concepts or {}).get("attributes") or [] if len(p) == 2}


def concept_verdicts(concepts: dict[str, Any] | None, trihe: dict[str, Any] | None,
                     halfscore: dict[str, Any] | None) -> tuple[dict[str, str], dict[tuple[str, str, str], str]]:
    """Verdict of each object name and each (s, p, o) edge between objects of the response.

    Tri-HE's relation claims decide edges. An object error ("object") blames the claim's
    ends that nothing else supports: an end that HalFscore matched, or that is part of a
    supported claim, stays supported. An attribute or count claim is not an edge: its value
    gets its own verdict (``attribute_verdicts``); its subject is there unless the claim is an
    object error. An object Tri-HE supports but HalFscore calls hallucinated is uncertain.
    HalFscore's lists decide the other objects.

    >>> nodes, edges = concept_verdicts(None, {"triplets": [{"triplet": ["dog", "on", "sofa"],
    ...                                                     "verdict": "relation"}]}, None)
    >>> nodes["dog"], edges[("dog", "on", "sofa")]
    ('supported', 'hallucinated')
    >>> nodes, edges = concept_verdicts(None, {"triplets": [{"triplet": ["flag", "is", "pink"], "verdict": "relation",
    ...                                                     "kind": "attribute"}]}, None)
    >>> nodes, edges
    ({'flag': 'supported'}, {})
    >>> nodes, _ = concept_verdicts(None, {"triplets": [{"triplet": ["bird", "near", "tree"], "verdict": "object"}]},
    ...                             {"matched": [[["object", "tree"], ["object", "tree"], 1.0]]})
    >>> sorted(nodes.items())
    [('bird', 'hallucinated'), ('tree', 'supported')]
    """
    pairs = _attribute_pairs(concepts)
    triplets, qualities = [], []
    for t in (trihe or {}).get("triplets") or []:
        parts = [str(x) for x in (t.get("triplet") or [])]
        if len(parts) != 3:
            continue
        kind = claim_kind(t, pairs)
        (qualities if kind in ("attribute", "count") else triplets).append((tuple(parts), str(t.get("verdict")), kind))
    hallucinated = object_names((halfscore or {}).get("hallucinated") or [])
    matched = object_names(m[0] for m in (halfscore or {}).get("matched") or [] if m)
    backed = set(matched)
    for (s, _, o), label, _ in triplets:
        if label in ("supported", "relation"):
            backed.update((s.lower(), o.lower()))
    for (s, _, _), label, _ in qualities:
        if label != "object":
            backed.add(s.lower())  # the judge found the subject to check its attribute (or its count) on
    nodes: dict[str, str] = {}
    edges: dict[tuple[str, str, str], str] = {}
    for (s, p, o), label, _ in triplets:
        verdict = TRIHE_TO_VERDICT.get(label, UNCERTAIN)
        edges[(s, p, o)] = _worse(edges.get((s, p, o)), verdict)
        for name in (s, o):
            if label == "object":
                end = SUPPORTED if name.lower() in backed and name.lower() not in hallucinated else HALLUCINATED
            else:
                end = UNCERTAIN if verdict == UNCERTAIN else SUPPORTED
            nodes[name] = _worse(nodes.get(name), end)
    for (s, _, _), label, kind in qualities:
        if kind == "attribute" and label == "object" and s.lower() not in backed:
            nodes[s] = _worse(nodes.get(s), HALLUCINATED)
        elif s not in nodes:
            nodes[s] = SUPPORTED if s.lower() in backed else UNCERTAIN
    for name, verdict in list(nodes.items()):
        if verdict == SUPPORTED and name.lower() in hallucinated:
            nodes[name] = UNCERTAIN  # Tri-HE supports it, HalFscore finds it nowhere in the reference
    for name in (concepts or {}).get("objects") or []:
        key = str(name).lower()
        if name in nodes:
            continue
        if key in hallucinated:
            nodes[str(name)] = HALLUCINATED
        elif key in matched:
            nodes[str(name)] = SUPPORTED
    return nodes, edges


@dataclass(frozen=True)
class Quality:
    """An attribute (or count) the response gives an object, with the judge's verdict on it ("" when not judged)."""

    subject: str
    value: str
    kind: str  # attribute or count
    verdict: str  # supported / hallucinated / uncertain, or ""
    label: str  # the judge's own label, as ``claim_label`` names it ("attribute", "count", "supported", ...)
    reason: str = ""


def attribute_verdicts(concepts: dict[str, Any] | None, trihe: dict[str, Any] | None) -> list[Quality]:
    """Every attribute and count of the response's objects, each with its own verdict.

    >>> for q in attribute_verdicts(
    ...     {"attributes": [["flag", "blue"], ["flag", "pink"], ["sky", "clear"]]},
    ...     {"triplets": [{"triplet": ["flag", "is", "pink"], "verdict": "relation", "kind": "attribute"},
    ...                   {"triplet": ["flag", "is", "blue"], "verdict": "supported", "kind": "attribute"}]}):
    ...     print(q.subject, q.value, q.verdict or "-", q.label or "-")
    flag pink hallucinated attribute
    flag blue supported supported
    sky clear - -
    """
    pairs = _attribute_pairs(concepts)
    out: dict[tuple[str, str], Quality] = {}
    for t in (trihe or {}).get("triplets") or []:
        parts = [str(x) for x in (t.get("triplet") or [])]
        kind = claim_kind(t, pairs)
        if len(parts) != 3 or kind not in ("attribute", "count"):
            continue
        label = str(t.get("verdict"))
        verdict = TRIHE_TO_VERDICT.get(label, UNCERTAIN)
        key = (parts[0].lower(), parts[2].lower())
        if key not in out or _worse(out[key].verdict or None, verdict) != out[key].verdict:
            out[key] = Quality(parts[0], parts[2], kind, verdict, claim_label(label, kind), str(t.get("reason") or ""))
    for pair in (concepts or {}).get("attributes") or []:
        if len(pair) == 2 and (str(pair[0]).lower(), str(pair[1]).lower()) not in out:
            out[(str(pair[0]).lower(), str(pair[1]).lower())] = Quality(str(pair[0]), str(pair[1]), "attribute", "", "")
    return list(out.values())


def concept_graph_html(concepts: dict[str, Any] | None, trihe: dict[str, Any] | None = None,
                       halfscore: dict[str, Any] | None = None, text: str | None = None) -> str:
    """A full HTML page drawing the response's concepts: objects and the relations between them coloured by their
    verdicts, and each attribute (or count) as its own small node coloured by its own verdict. With the response's
    ``text``, objects of one name it describes apart are drawn apart (``instances.same_name_instances``)."""
    node_verdicts, edge_verdicts = concept_verdicts(concepts, trihe, halfscore)
    qualities = attribute_verdicts(concepts, trihe)
    # "an astronaut" is a count of one the judge confirms for nearly every object: said in the object's tooltip,
    # not drawn; every attribute, and every other count, gets its node
    ones = {q.subject: q for q in qualities if q.kind == "count" and q.verdict == SUPPORTED and count_of(q.value) == 1}
    qualities = [q for q in qualities if ones.get(q.subject) is not q]
    names: list[str] = [str(n) for n in (concepts or {}).get("objects") or []]
    pairs = _attribute_pairs(concepts)
    triples = [tuple(str(x) for x in r) for r in (concepts or {}).get("relations") or [] if len(r) == 3]
    triples = [t for t in triples if claim_kind({"triplet": list(t)}, pairs) == "relation"]
    triples += [t for t in edge_verdicts if t not in triples]
    for s, _, o in triples:
        names += [s, o]
    names += [q.subject for q in qualities]
    split = same_name_instances(concepts, text)
    related = {n.lower() for s, _, o in triples for n in (s, o)}
    net = _network()
    boxes, options = [], {}
    for name in dict.fromkeys(names):
        verdict = node_verdicts.get(name)
        count = ["count: one (supported)"] if name in ones else []
        alone = [] if name.lower() in related else ["named in no relation of the response"]
        groups = split.get(name.lower(), [None])
        for k, group in enumerate(groups):
            node = _instance(name, k, split)
            label = name if len(groups) == 1 else f"{name} {k + 1}"
            apart = [f"one of {len(groups)} {name}s the response describes apart"] if len(groups) > 1 else []
            boxes.append(Box(node, label, _OBJECT_FONT))
            options[node] = {"shape": "box", "color": VERDICT_COLOURS.get(verdict or "", _NEUTRAL),
                             "title": _tooltip(label, f"object: {verdict or 'not judged'}", *count, *alone, *apart)}
    links = _quality_links(qualities, split, boxes, options) + _relation_links(triples, edge_verdicts, split)
    return _html(net, _draw(net, boxes, links, options))


def _instance(name: str, k: int, split: dict[str, list[frozenset[str]]]) -> str:
    return f"c:{name}#{k}" if name.lower() in split else f"c:{name}"


def _quality_links(qualities: list[Quality], split: dict[str, list[frozenset[str]]], boxes: list[Box],
                   options: dict[str, dict[str, Any]]) -> list[tuple[Link, dict[str, Any]]]:
    """Each attribute (or count) as a small node beside the object (each instance) it is said of."""
    links: list[tuple[Link, dict[str, Any]]] = []
    for k, q in enumerate(qualities):
        groups = split.get(q.subject.lower())
        owners = [i for i, g in enumerate(groups) if q.value.lower() in g] if groups else [0]
        colour = VERDICT_COLOURS.get(q.verdict, _NEUTRAL)
        tip = _tooltip(f"{q.subject} is {q.value}", f"{q.kind}: {q.label or 'not judged'}", q.reason)
        for i in owners or [0]:
            node, owner = f"q:{k}:{i}", _instance(q.subject, i, split)
            boxes.append(Box(node, q.value, _ATTRIBUTE_FONT, _ATTRIBUTE_MARGIN, anchor=owner))
            options[node] = {"shape": "ellipse", "color": colour, "title": tip,
                             "font": {"size": _ATTRIBUTE_FONT, "color": "#ffffff" if q.verdict else "#222222"},
                             "margin": _ATTRIBUTE_MARGIN}
            links.append((Link(owner, node), {"color": colour if q.verdict else "#999999", "title": tip,
                                              "arrows": "", "width": 2, "dashes": not q.verdict}))
    return links


def _relation_links(triples: list[tuple[str, ...]], edge_verdicts: dict[tuple[str, str, str], str],
                    split: dict[str, list[frozenset[str]]]) -> list[tuple[Link, dict[str, Any]]]:
    """One edge per pair of objects, a line per predicate; a relation of an object with its own name joins two of
    its instances (the text does not say which: the first two), any other the first instance."""
    links: list[tuple[Link, dict[str, Any]]] = []
    for group in _parallel({t: None for t in dict.fromkeys(triples)}).values():  # type: ignore[misc]
        s, _, o = group[0]
        worst = None
        for v in (edge_verdicts.get(t) for t in group):  # type: ignore[arg-type]
            worst = _worse(worst, v) if v else worst
        label = "\n".join(p if (a, b) == (s, o) else f"{p} (←)" for a, p, b in group)
        tip = _tooltip(*(f"{a} {p} {b}: {edge_verdicts.get((a, p, b)) or 'not judged'}" for a, p, b in group))
        target = _instance(o, 1 if s.lower() == o.lower() and o.lower() in split else 0, split)
        links.append((Link(_instance(s, 0, split), target, label, _EDGE_FONT),
                      {"color": VERDICT_COLOURS.get(worst or "", "#999999"), "title": tip, "dashes": worst is None,
                       "arrows": "to" if all((a, b) == (s, o) for a, _, b in group) else "to, from"}))
    return links


def graph_iframe(page: str | None, height: int = 460, title: str = "graph", empty: str = "no graph") -> str:
    """The page in an ``<iframe srcdoc>`` sandboxed to scripts only (no same-origin, no top navigation), at least
    ``height`` px high, higher where the page asks for it (a dense graph)."""
    if not page:
        return empty_note(empty)
    asked = _HEIGHT_FOUND.search(page)
    height = max(int(height), int(asked.group(1)) if asked else 0)
    return (f'<iframe class="hs-graph" title="{esc(title)}" sandbox="allow-scripts" '
            f'style="width:100%;height:{int(height)}px;border:1px solid #ddd;border-radius:6px" '
            f'srcdoc="{esc(page)}"></iframe>')
