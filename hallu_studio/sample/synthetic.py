"""Procedurally rendered CLEVR-like scenes whose scene graphs are exact by construction.

In the spirit of VISCON's rule-built 3D scenes: every scene is drawn from a seed
with PIL (a floor, 2-6 shapes with colour, material and size) and its relations
are computed from the drawn geometry, so the graph is true of the picture.
Depth is the y of an object's base: a larger base y is nearer the viewer.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

from PIL import Image, ImageDraw

from ..model import SceneGraph, SceneObject, SceneRelation

WIDTH, HEIGHT = 512, 384
HORIZON = 150  # floor starts here; bases sit below it
SHAPES: tuple[str, ...] = ("cube", "sphere", "cylinder", "cone")
COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (173, 35, 35), "blue": (42, 75, 215), "green": (29, 105, 20), "yellow": (235, 220, 40),
    "purple": (129, 38, 192), "gray": (120, 120, 120), "brown": (129, 74, 25), "cyan": (41, 208, 208),
}
MATERIALS: tuple[str, ...] = ("metal", "rubber")
SIZES: dict[str, int] = {"small": 44, "large": 80}  # drawn width in pixels
MIN_DX = 20  # below this horizontal gap in centres, "left of" is not asserted
MIN_DY = 20  # below this gap in base y, "in front of" is not asserted
NEXT_TO_GAP = 30  # boxes this close horizontally at similar depth are "next to"


@dataclass
class Placed:
    id: str
    shape: str
    colour: str
    material: str
    size: str
    cx: float  # centre x
    base: float  # y of the base (depth cue)
    w: float
    h: float
    on: str | None = None  # id of the object it is stacked on

    @property
    def box(self) -> tuple[float, float, float, float]:
        return (self.cx - self.w / 2, self.base - self.h, self.w, self.h)

    @property
    def label(self) -> str:
        return f"{self.colour} {self.shape}"


def _shade(rgb: tuple[int, int, int], f: float) -> tuple[int, int, int]:
    return tuple(max(0, min(255, int(c * f))) for c in rgb)  # type: ignore[return-value]


def _draw(d: ImageDraw.ImageDraw, p: Placed) -> None:
    x, y, w, h = p.box
    base = COLOURS[p.colour]
    if p.shape == "cube":
        depth = w * 0.25
        front = (x, y + depth, x + w - depth, y + h)
        d.rectangle(front, fill=base, outline=_shade(base, 0.5))
        d.polygon([(x, y + depth), (x + depth, y), (x + w, y), (x + w - depth, y + depth)], fill=_shade(base, 1.3))
        d.polygon([(x + w - depth, y + depth), (x + w, y), (x + w, y + h - depth), (x + w - depth, y + h)],
                  fill=_shade(base, 0.7))
    elif p.shape == "sphere":
        d.ellipse((x, y, x + w, y + h), fill=base, outline=_shade(base, 0.5))
        d.ellipse((x + w * 0.15, y + h * 0.5, x + w * 0.95, y + h * 0.98), fill=_shade(base, 0.8))
        d.ellipse((x + w * 0.1, y + h * 0.1, x + w * 0.85, y + h * 0.8), fill=base)
    elif p.shape == "cylinder":
        e = h * 0.22
        d.rectangle((x, y + e / 2, x + w, y + h - e / 2), fill=base)
        d.ellipse((x, y + h - e, x + w, y + h), fill=base, outline=_shade(base, 0.5))
        d.ellipse((x, y, x + w, y + e), fill=_shade(base, 1.3), outline=_shade(base, 0.5))
    else:  # cone
        e = h * 0.18
        d.ellipse((x, y + h - e, x + w, y + h), fill=_shade(base, 0.8))
        d.polygon([(x + w / 2, y), (x, y + h - e / 2), (x + w, y + h - e / 2)], fill=base, outline=_shade(base, 0.5))
    if p.material == "metal":
        # a specular highlight is what tells metal from matte rubber
        hx, hy = x + w * 0.3, y + h * 0.2
        d.ellipse((hx, hy, hx + w * 0.18, hy + h * 0.12), fill=(250, 250, 250))


def _place(rng: random.Random, n: int) -> list[Placed]:
    used: set[tuple[str, str]] = set()
    placed: list[Placed] = []
    slots = rng.sample(range(6), n)  # six horizontal slots keep shapes from overlapping sideways
    for k, slot in enumerate(sorted(slots)):
        while True:
            shape, colour = rng.choice(SHAPES), rng.choice(list(COLOURS))
            if (shape, colour) not in used:  # "red cube" must name one object
                used.add((shape, colour))
                break
        size = rng.choice(list(SIZES))
        w = SIZES[size]
        h = w * (1.25 if shape == "cone" else 1.0)
        cx = 50 + slot * 82 + rng.uniform(-8, 8)
        base = rng.uniform(HORIZON + 100, HEIGHT - 12)
        placed.append(Placed(f"o{k}", shape, colour, rng.choice(MATERIALS), size, cx, base, w, h))
    # Sometimes stack a small cube on a large cube or cylinder (flat tops only).
    supports = [p for p in placed if p.size == "large" and p.shape in ("cube", "cylinder")]
    if supports and rng.random() < 0.5:
        under = rng.choice(supports)
        while True:
            colour = rng.choice(list(COLOURS))
            if ("cube", colour) not in used:
                used.add(("cube", colour))
                break
        top_y = under.base - under.h + (under.w * 0.25 if under.shape == "cube" else under.h * 0.11)
        placed.append(Placed(f"o{len(placed)}", "cube", colour, rng.choice(MATERIALS), "small",
                             under.cx - (under.w * 0.125 if under.shape == "cube" else 0), top_y,
                             SIZES["small"], SIZES["small"], on=under.id))
    return placed


def _relations(objs: list[Placed]) -> list[SceneRelation]:
    rels: list[SceneRelation] = []
    for p in objs:
        if p.on:
            rels.append(SceneRelation(p.id, "on top of", p.on))
    for i, a in enumerate(objs):
        for b in objs[i + 1:]:
            if a.on == b.id or b.on == a.id:
                continue
            left, right = (a, b) if a.cx < b.cx else (b, a)
            if right.cx - left.cx >= MIN_DX:
                rels.append(SceneRelation(left.id, "left of", right.id))
            if a.on or b.on:
                continue  # depth of a stacked object is its support's; keep only left/right
            near, far = (a, b) if a.base > b.base else (b, a)
            if near.base - far.base >= MIN_DY:
                rels.append(SceneRelation(near.id, "in front of", far.id))
            gap = (right.cx - right.w / 2) - (left.cx + left.w / 2)
            if gap < NEXT_TO_GAP and abs(a.base - b.base) < MIN_DY:
                rels.append(SceneRelation(left.id, "next to", right.id))
    return rels


@dataclass
class SyntheticScene:
    image: Image.Image
    graph: SceneGraph
    objects: list[Placed]


def render(seed: int) -> SyntheticScene:
    """The scene for ``seed``: same seed, same pixels and graph."""
    rng = random.Random(f"hallu-studio-sample-scene-{seed}")
    objs = _place(rng, rng.randint(2, 5))
    img = Image.new("RGB", (WIDTH, HEIGHT), (205, 205, 210))
    d = ImageDraw.Draw(img)
    for row in range(HORIZON, HEIGHT):  # floor gets lighter toward the viewer
        shade = 150 + int(60 * (row - HORIZON) / (HEIGHT - HORIZON))
        d.line([(0, row), (WIDTH, row)], fill=(shade, shade, shade - 5))
    for p in sorted(objs, key=lambda o: (o.base if not o.on else _support_base(objs, o) + 0.5)):
        _draw(d, p)
    graph = SceneGraph(
        objects=[SceneObject(p.id, p.shape, [p.colour, p.size, p.material], p.box) for p in objs],
        relations=_relations(objs))
    return SyntheticScene(img, graph, objs)


def _support_base(objs: list[Placed], p: Placed) -> float:
    return next(o.base for o in objs if o.id == p.on)


def render_scene(seed: int) -> tuple[Image.Image, SceneGraph]:
    """Notebook helper: the rendered image and its exact scene graph."""
    scene = render(seed)
    return scene.image, scene.graph


def describe(scene: SyntheticScene) -> str:
    """A dense reference caption generated from the graph."""
    items = [f"a {p.size} {p.colour} {p.material} {p.shape}" for p in scene.objects]
    by_id = {p.id: p for p in scene.objects}
    # Only the relations between x-neighbours (plus stacking and next-to) keep the caption readable.
    order = [p.id for p in sorted(scene.objects, key=lambda o: o.cx)]
    neighbours = set(itertools.pairwise(order))
    facts = [f"the {by_id[r.subject].label} is {r.predicate} the {by_id[r.object].label}"
             for r in scene.graph.relations
             if r.predicate != "left of" or (r.subject, r.object) in neighbours]
    text = f"A rendered scene of {len(items)} objects on a gray floor: " + ", ".join(items) + "."
    if facts:
        text += " " + "; ".join(facts).capitalize() + "."
    return text
