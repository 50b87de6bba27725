"""Positions for a graph's labelled boxes so that no two boxes, and no box and edge label, overlap.

vis.js's force layout left boxes on top of each other and over edge labels. Here the layout is
computed once, in Python: a seeded spring layout for the shape, scaled so that edges are long
enough for their labels, then boxes are pushed apart until nothing overlaps (the smaller
penetration axis first, as rectangle overlap removal does). The page draws the nodes where they
are put, with physics off, and zooms to fit: the zoom scales everything alike, so what does not
overlap here does not overlap on screen at any size.

Sizes are estimated from the label's characters (``CHAR_WIDTH`` of the font size, a little
generous for a sans-serif), so the check is against boxes at least as large as those drawn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

CHAR_WIDTH = 0.62  # of the font size: wider than the average sans-serif glyph
LINE_HEIGHT = 1.3  # of the font size
GAP = 14.0  # pixels kept free between boxes


@dataclass(frozen=True)
class Box:
    """A node to place: its id, its label's lines and font size, and the padding around the text."""

    id: str
    label: str
    font_size: float = 18.0
    margin: float = 8.0
    anchor: str | None = None  # a box this one belongs to (an attribute's object): placed around it

    @property
    def size(self) -> tuple[float, float]:
        lines = self.label.split("\n") or [""]
        width = max(len(line) for line in lines) * CHAR_WIDTH * self.font_size + 2 * self.margin + 4
        height = len(lines) * LINE_HEIGHT * self.font_size + 2 * self.margin + 4
        return width, height


@dataclass(frozen=True)
class Link:
    """An edge from ``source`` to ``target``; its label (drawn at the edge's middle) must not be covered."""

    source: str
    target: str
    label: str = ""
    font_size: float = 14.0

    @property
    def size(self) -> tuple[float, float]:
        if not self.label:
            return 0.0, 0.0
        lines = self.label.split("\n")
        return (max(len(line) for line in lines) * CHAR_WIDTH * self.font_size + 6,
                len(lines) * LINE_HEIGHT * self.font_size + 4)


def layout(boxes: Sequence[Box], links: Sequence[Link], seed: int = 0, iterations: int = 600,
           aspect: float = 1.3) -> dict[str, tuple[float, float]]:
    """``{box id: (x, y)}`` in pixels, no two boxes and no box and edge label overlapping.

    Each connected part is laid out on its own, then the parts are packed in rows (largest first) into a
    block about ``aspect`` times as wide as high, the shape of the frame the graph is drawn in.

    >>> pos = layout([Box("a", "cat"), Box("b", "sofa"), Box("c", "grey")], [Link("a", "b", "on"), Link("a", "c")])
    >>> overlaps([Box("a", "cat"), Box("b", "sofa"), Box("c", "grey")], [Link("a", "b", "on"), Link("a", "c")], pos)
    []
    """
    import networkx as nx

    if not boxes:
        return {}
    known = {b.id for b in boxes}
    graph = nx.Graph()
    graph.add_nodes_from(known)
    graph.add_edges_from((e.source, e.target) for e in links if e.source in known and e.target in known)
    graph.add_edges_from((b.id, b.anchor) for b in boxes if b.anchor in known)
    parts = []
    for members in nx.connected_components(graph):
        part_boxes = [b for b in boxes if b.id in members]
        part_links = [e for e in links if e.source in members and e.target in members]
        pos = _part_layout(part_boxes, part_links, seed, iterations, aspect)
        sizes = {b.id: b.size for b in part_boxes}
        left = min(pos[k][0] - sizes[k][0] / 2 for k in pos)
        top = min(pos[k][1] - sizes[k][1] / 2 for k in pos)
        right = max(pos[k][0] + sizes[k][0] / 2 for k in pos)
        bottom = max(pos[k][1] + sizes[k][1] / 2 for k in pos)
        parts.append(({k: (x - left, y - top) for k, (x, y) in pos.items()}, right - left, bottom - top))
    parts.sort(key=lambda p: (-p[1] * p[2], min(p[0])))
    area = sum((w + GAP) * (h + GAP) for _, w, h in parts)
    row_width = max(max(w for _, w, _ in parts), (area * aspect) ** 0.5)
    out: dict[str, tuple[float, float]] = {}
    x = y = row_height = 0.0
    for pos, w, h in parts:
        if x > 0 and x + w > row_width:
            x, y, row_height = 0.0, y + row_height + 2 * GAP, 0.0
        out.update({k: (px + x, py + y) for k, (px, py) in pos.items()})
        x += w + 2 * GAP
        row_height = max(row_height, h)
    mx = sum(p[0] for p in out.values()) / len(out)
    my = sum(p[1] for p in out.values()) / len(out)
    return {k: (px - mx, py - my) for k, (px, py) in out.items()}


def _part_layout(boxes: Sequence[Box], links: Sequence[Link], seed: int, iterations: int, aspect: float = 1.3
                 ) -> dict[str, tuple[float, float]]:
    """One connected part: a seeded spring layout of its main boxes stretched to about ``aspect`` (width over
    height), anchored boxes around their anchors, then overlaps pushed apart."""
    import networkx as nx

    ids = [b.id for b in boxes]
    index = {k: i for i, k in enumerate(ids)}
    sizes = np.array([b.size for b in boxes], dtype=float)
    main = [b.id for b in boxes if b.anchor not in index]
    graph = nx.Graph()
    graph.add_nodes_from(main)
    spine = [e for e in links if e.source in graph and e.target in graph and e.source != e.target]
    graph.add_edges_from((e.source, e.target) for e in spine)
    start = _stress_layout(graph, main, seed)
    pos = np.zeros((len(ids), 2))
    for k in main:
        pos[index[k]] = start[k]
    # Scale so that a typical edge is about as long as a typical box is wide, plus its label (a little less: the
    # overlap removal below spreads out what needs the room).
    main_sizes = sizes[[index[k] for k in main]]
    want = 0.8 * (float(np.median(main_sizes[:, 0])) + float(np.median([e.size[0] for e in spine] or [0.0])))
    lengths = np.array([np.linalg.norm(pos[index[e.source]] - pos[index[e.target]]) for e in spine] or [0.0])
    typical = float(np.median(lengths[lengths > 0])) if np.any(lengths > 0) else 1.0
    pos *= want / max(typical, 1e-9)
    _stretch(pos[[index[k] for k in main]], aspect, pos, [index[k] for k in main])
    neighbours: dict[int, set[int]] = {}
    for e in spine:
        neighbours.setdefault(index[e.source], set()).add(index[e.target])
        neighbours.setdefault(index[e.target], set()).add(index[e.source])
    _place_satellites(boxes, index, sizes, pos, neighbours)
    labelled = [(index[e.source], index[e.target], *e.size) for e in links
                if e.label and e.source in index and e.target in index and e.source != e.target]
    _remove_overlaps(pos, sizes, labelled, np.random.default_rng(seed), iterations)
    return {k: (float(pos[i, 0]), float(pos[i, 1])) for i, k in enumerate(ids)}


def _stretch(main: np.ndarray, aspect: float, pos: np.ndarray, rows: list[int]) -> None:
    """Scale the main boxes' x and y apart (the area kept) so that their spread is about ``aspect`` wide over high:
    a round spring layout of a dense graph drawn in a frame as high as wide otherwise fits only shrunk past reading.
    Overlaps made by the squeeze are pushed apart afterwards."""
    if len(main) < 3:
        return
    width, height = np.ptp(main[:, 0]), np.ptp(main[:, 1])
    if width <= 0 or height <= 0:
        return
    # at most twice or half: a chain drawn along a line is a line on purpose, not a round layout to reshape
    factor = min(2.0, max(0.5, (aspect * height / width) ** 0.5))
    pos[rows, 0] *= factor
    pos[rows, 1] /= factor


def _stress_layout(graph: "Any", order: list[str], seed: int) -> dict[str, np.ndarray]:
    """Stress majorization (Gansner, Koren & North 2004): positions whose distances match the graph's shortest
    paths, so that edges come out about equally long (a spring layout stretched some across the frame).

    Started from classical scaling (MDS) of the path lengths, which is deterministic; ``seed`` only breaks a
    tie of coinciding nodes.
    """
    import networkx as nx

    n = len(order)
    if n < 2:
        return {k: np.zeros(2) for k in order}
    at = {k: i for i, k in enumerate(order)}
    d = np.full((n, n), float(n))  # a part is connected; the fallback is only for safety
    for source, lengths in nx.all_pairs_shortest_path_length(graph):
        for target, length in lengths.items():
            d[at[source], at[target]] = float(length)
    np.fill_diagonal(d, 0.0)
    # classical scaling: the top two eigenvectors of the double-centred squared distances
    j = np.eye(n) - 1.0 / n
    values, vectors = np.linalg.eigh(-0.5 * j @ (d ** 2) @ j)
    top = np.argsort(values)[::-1][:2]
    x = vectors[:, top] * np.sqrt(np.maximum(values[top], 1e-9))
    x += np.random.default_rng(seed).normal(0, 1e-3, x.shape)
    w = np.zeros_like(d)
    off = d > 0
    w[off] = d[off] ** -2.0
    lw = np.diag(w.sum(axis=1)) - w
    lw_pinv = np.linalg.pinv(lw)
    for _ in range(300):
        dist = np.linalg.norm(x[:, None] - x[None], axis=-1)
        np.fill_diagonal(dist, 1.0)
        b = np.where(off, -w * d / np.maximum(dist, 1e-9), 0.0)
        np.fill_diagonal(b, -b.sum(axis=1))
        new = lw_pinv @ b @ x
        if np.abs(new - x).max() < 1e-4:
            x = new
            break
        x = new
    # the long axis across: frames are wider than high
    x -= x.mean(axis=0)
    _, _, axes = np.linalg.svd(x, full_matrices=False)
    x = x @ axes.T
    return {k: x[at[k]] for k in order}


def _place_satellites(boxes: Sequence[Box], index: dict[str, int], sizes: np.ndarray, pos: np.ndarray,
                      neighbours: dict[int, set[int]]) -> None:
    """Each anchored box around its anchor, spread over the widest angle its anchor's edges leave free."""
    around: dict[str, list[int]] = {}
    for i, b in enumerate(boxes):
        if b.anchor in index:
            around.setdefault(b.anchor, []).append(i)
    for anchor, members in around.items():
        a = index[anchor]
        radius = float(np.hypot(*sizes[a]) / 2 + max(sizes[m, 0] for m in members) / 2 + GAP)
        # in the widest gap between the anchor's edges, so that no satellite sits on an edge
        directions = sorted(float(np.arctan2(*(pos[j] - pos[a])[::-1])) for j in neighbours.get(a, ())
                            if np.any(pos[j] != pos[a]))
        if directions:
            gaps = [((directions[(k + 1) % len(directions)] - d) % (2 * np.pi) or 2 * np.pi, d)
                    for k, d in enumerate(directions)]
            width, start = max(gaps)
        else:
            width, start = 2 * np.pi, -np.pi / 2 - np.pi
        spread = min(width * 0.8, 0.9 * len(members))  # radians
        centre = start + width / 2
        for k, m in enumerate(members):
            angle = centre + (k - (len(members) - 1) / 2) * (spread / max(len(members), 1))
            pos[m] = pos[a] + radius * np.array([np.cos(angle), np.sin(angle)])


def _remove_overlaps(pos: np.ndarray, sizes: np.ndarray, labelled: list[tuple[int, int, float, float]],
                     rng: np.random.Generator, iterations: int) -> None:
    """Push overlapping items apart, in place. Items are the boxes and the edge labels; a label sits at its
    edge's middle, so moving a label moves both ends of its edge by as much."""
    n, m = len(pos), len(labelled)
    ends = np.zeros((m, n))  # label -> its edge's two ends
    for k, (a, b, _, _) in enumerate(labelled):
        ends[k, a] = ends[k, b] = 1.0
    where = np.vstack([np.eye(n), ends / 2])  # item positions from node positions
    size = np.vstack([sizes, np.array([[w, h] for _, _, w, h in labelled]).reshape(-1, 2)])
    # a label must clear its own edge's two boxes too: pushing it off one moves the other end away
    allowed = ~np.eye(n + m, dtype=bool)
    order = np.triu(np.ones((n + m, n + m)), 1) - np.tril(np.ones((n + m, n + m)), -1)
    pos += rng.normal(0.0, 1e-3, pos.shape)  # coinciding centres (satellites of one box) part in a seeded direction
    for step in range(iterations):
        if step and step % 60 == 0:
            pos *= 1.08  # still crowded (pushes that undo each other): spread everything a little
        at = where @ pos
        dx = at[:, None, 0] - at[None, :, 0]
        dy = at[:, None, 1] - at[None, :, 1]
        px = (size[:, None, 0] + size[None, :, 0]) / 2 + GAP - np.abs(dx)
        py = (size[:, None, 1] + size[None, :, 1]) / 2 + GAP - np.abs(dy)
        hit = (px > 0) & (py > 0) & allowed
        if not hit.any():
            return
        # one direction per pair, opposite for its two members (by their order where the centres coincide)
        sx = np.where(dx == 0, order, np.sign(dx))
        sy = np.where(dy == 0, order, np.sign(dy))
        along_x = hit & (px <= py)  # the axis that needs the smaller move
        along_y = hit & (px > py)
        push = np.stack([np.where(along_x, sx * (px / 2 + 0.5), 0.0).sum(axis=1),
                         np.where(along_y, sy * (py / 2 + 0.5), 0.0).sum(axis=1)], axis=1)
        pos += push[:n] + ends.T @ push[n:]


def overlaps(boxes: Sequence[Box], links: Sequence[Link], pos: dict[str, tuple[float, float]]) -> list[str]:
    """What overlaps in a layout: two boxes, or a box over an edge label (its own edge's ends too); empty: none."""
    out = []
    items = [(b.id, np.array(pos[b.id]), *b.size) for b in boxes]
    for x in range(len(items)):
        for y in range(x + 1, len(items)):
            (i, p, w, h), (j, q, v, g) = items[x], items[y]
            if abs(p[0] - q[0]) < (w + v) / 2 and abs(p[1] - q[1]) < (h + g) / 2:
                out.append(f"box {i} over box {j}")
    for e in links:
        if not e.label or e.source == e.target:
            continue
        c = (np.array(pos[e.source]) + np.array(pos[e.target])) / 2
        w, h = e.size
        for i, p, bw, bh in items:
            if abs(p[0] - c[0]) < (bw + w) / 2 and abs(p[1] - c[1]) < (bh + h) / 2:
                out.append(f"box {i} over the label {e.label!r} of {e.source} → {e.target}")
    return out
