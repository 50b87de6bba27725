"""Scene graphs and response concept graphs as pyvis networks, shown in a sandboxed iframe.

pyvis inlines vis.js (``cdn_resources="in_line"``); its template still links
Bootstrap from a CDN, which is stripped, and a Content-Security-Policy forbids any
request from inside the frame. The frame is ``sandbox="allow-scripts"`` without
``allow-same-origin``: even a hostile label could not reach the app's page.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from jinja2 import Environment, FileSystemLoader
from pyvis.network import Network

from ...model import SceneGraph
from .concepts import object_names
from .palette import (HALLUCINATED, SUPPORTED, TRIHE_TO_VERDICT, UNCERTAIN, VERDICT_COLOURS, empty_note, esc)

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


# Force-directed layout that spreads labelled boxes apart, settled before the first paint; then
# physics stops (nodes no longer drift under the reader) and the view fits the whole graph.
_OPTIONS = ('{"physics": {"solver": "forceAtlas2Based", "forceAtlas2Based": {"gravitationalConstant": -60, '
            '"centralGravity": 0.02, "springLength": 80, "avoidOverlap": 1}, '
            '"stabilization": {"iterations": 300, "fit": true}, '
            '"minVelocity": 1}, '
            '"edges": {"font": {"size": 14, "align": "middle", "strokeWidth": 4}, '
            '"arrows": {"to": {"scaleFactor": 0.6}}, "smooth": {"type": "continuous"}}, '
            '"nodes": {"font": {"size": 18}, "margin": 8}, "interaction": {"hover": true}}')
# The smallest zoom a fitted graph gets: below it, labels are too small to read (pan to see the rest).
_MIN_SCALE = 0.55
_FIT_SCRIPT = ("<script>(function () {"
               " function fit() { network.fit({animation: false});"
               f" if (network.getScale() < {_MIN_SCALE}) {{ network.moveTo({{scale: {_MIN_SCALE}}}); }} }}"
               " network.once('stabilizationIterationsDone', function () {"
               " network.setOptions({physics: {enabled: false}}); fit(); });"
               " window.addEventListener('resize', fit); fit();"
               # A frame drawn while hidden (a closed panel, a tab not shown) has no size yet: fit once it has.
               " if (window.ResizeObserver) { new ResizeObserver(function () {"
               " if (document.getElementById('mynetwork').clientWidth > 0) { fit(); } })"
               ".observe(document.getElementById('mynetwork')); }"
               "})();</script>")


def _network(height: str) -> Network:
    net = Network(height=height, width="100%", directed=True, cdn_resources="in_line")
    net.templateEnv = _template_env(net.template_dir)
    net.set_options(_OPTIONS)
    return net


def _html(net: Network) -> str:
    page = net.generate_html()
    page = _CDN_TAGS.sub("", page)
    page = page.replace("<head>", "<head>" + _CSP + _FRAME_CSS, 1)
    return page.replace("</body>", _FIT_SCRIPT + "</body>", 1)


def _tooltip(*lines: str) -> str:
    # vis.js shows a string title as HTML: escape it, and keep it plain text.
    return esc("\n".join(lines))


def scene_graph_html(graph: SceneGraph, height: str = "450px") -> str:
    """A full HTML page drawing the reference scene graph (attributes in the node tooltip)."""
    net = _network(height)
    for o in graph.objects:
        label = o.name if not o.attributes else f"{o.name}\n({', '.join(o.attributes[:3])})"
        net.add_node(f"o:{o.id}", label=label, title=_tooltip(o.name, *o.attributes), color=_NEUTRAL, shape="box")
    for r in graph.relations:
        net.add_edge(f"o:{r.subject}", f"o:{r.object}", label=r.predicate, title=_tooltip(r.predicate))
    return _html(net)


def _worse(a: str | None, b: str) -> str:
    order = {None: 0, SUPPORTED: 1, UNCERTAIN: 2, HALLUCINATED: 3}
    return b if order.get(b, 0) > order.get(a, 0) else a  # type: ignore[return-value]


def concept_verdicts(concepts: dict[str, Any] | None, trihe: dict[str, Any] | None,
                     halfscore: dict[str, Any] | None) -> tuple[dict[str, str], dict[tuple[str, str, str], str]]:
    """Verdict of each object name and each (s, p, o) edge of the response.

    Tri-HE's triplet verdicts decide edges. An object error ("object") blames the triplet's
    ends that nothing else supports: an end that HalFscore matched, or that is part of a
    supported triplet, stays supported. An object Tri-HE supports but HalFscore calls
    hallucinated is uncertain. HalFscore's lists decide the other objects.

    >>> nodes, edges = concept_verdicts(None, {"triplets": [{"triplet": ["dog", "on", "sofa"],
    ...                                                     "verdict": "relation"}]}, None)
    >>> nodes["dog"], edges[("dog", "on", "sofa")]
    ('supported', 'hallucinated')
    >>> nodes, _ = concept_verdicts(None, {"triplets": [{"triplet": ["bird", "near", "tree"], "verdict": "object"}]},
    ...                             {"matched": [[["object", "tree"], ["object", "tree"], 1.0]]})
    >>> sorted(nodes.items())
    [('bird', 'hallucinated'), ('tree', 'supported')]
    """
    triplets = []
    for t in (trihe or {}).get("triplets") or []:
        parts = [str(x) for x in (t.get("triplet") or [])]
        if len(parts) == 3:
            triplets.append((tuple(parts), str(t.get("verdict"))))
    hallucinated = object_names((halfscore or {}).get("hallucinated") or [])
    matched = object_names(m[0] for m in (halfscore or {}).get("matched") or [] if m)
    backed = set(matched)
    for (s, _, o), label in triplets:
        if label in ("supported", "relation"):
            backed.update((s.lower(), o.lower()))
    nodes: dict[str, str] = {}
    edges: dict[tuple[str, str, str], str] = {}
    for (s, p, o), label in triplets:
        verdict = TRIHE_TO_VERDICT.get(label, UNCERTAIN)
        edges[(s, p, o)] = _worse(edges.get((s, p, o)), verdict)
        for name in (s, o):
            if label == "object":
                end = SUPPORTED if name.lower() in backed and name.lower() not in hallucinated else HALLUCINATED
            else:
                end = UNCERTAIN if verdict == UNCERTAIN else SUPPORTED
            nodes[name] = _worse(nodes.get(name), end)
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


def concept_graph_html(concepts: dict[str, Any] | None, trihe: dict[str, Any] | None = None,
                       halfscore: dict[str, Any] | None = None, height: str = "450px") -> str:
    """A full HTML page drawing the response's concepts, nodes and edges coloured by verdict."""
    node_verdicts, edge_verdicts = concept_verdicts(concepts, trihe, halfscore)
    attributes: dict[str, list[str]] = {}
    for pair in (concepts or {}).get("attributes") or []:
        if len(pair) == 2:
            attributes.setdefault(str(pair[0]), []).append(str(pair[1]))
    names: list[str] = [str(n) for n in (concepts or {}).get("objects") or []]
    triples = [tuple(str(x) for x in r) for r in (concepts or {}).get("relations") or [] if len(r) == 3]
    triples += [t for t in edge_verdicts if t not in triples]
    for s, _, o in triples:
        names += [s, o]
    net = _network(height)
    for name in dict.fromkeys(names):
        verdict = node_verdicts.get(name)
        attrs = attributes.get(name, [])
        label = name if not attrs else f"{name}\n({', '.join(attrs[:3])})"
        net.add_node(f"c:{name}", label=label, shape="box", color=VERDICT_COLOURS.get(verdict or "", _NEUTRAL),
                     title=_tooltip(name, f"verdict: {verdict or 'not judged'}", *attrs))
    for s, p, o in dict.fromkeys(triples):
        verdict = edge_verdicts.get((s, p, o))
        net.add_edge(f"c:{s}", f"c:{o}", label=p, color=VERDICT_COLOURS.get(verdict or "", "#999999"),
                     title=_tooltip(f"{s} {p} {o}", f"verdict: {verdict or 'not judged'}"),
                     dashes=verdict is None)
    return _html(net)


def graph_iframe(page: str | None, height: int = 460, title: str = "graph", empty: str = "no graph") -> str:
    """The page in an ``<iframe srcdoc>`` sandboxed to scripts only (no same-origin, no top navigation)."""
    if not page:
        return empty_note(empty)
    return (f'<iframe class="hs-graph" title="{esc(title)}" sandbox="allow-scripts" '
            f'style="width:100%;height:{int(height)}px;border:1px solid #ddd;border-radius:6px" '
            f'srcdoc="{esc(page)}"></iframe>')
