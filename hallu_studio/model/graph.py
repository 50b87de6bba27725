"""Scene graphs: objects with attributes and optional boxes, and the relations between them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from .base import ValidationError, content_key


@dataclass
class SceneObject:
    id: str
    name: str
    attributes: list[str] = field(default_factory=list)
    box: tuple[float, float, float, float] | None = None  # x, y, width, height in pixels

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"id": self.id, "name": self.name, "attributes": list(self.attributes)}
        if self.box is not None:
            d["box"] = list(self.box)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "SceneObject":
        if not isinstance(d, dict):
            raise ValidationError(f"scene-graph object must be an object, got {type(d).__name__}")
        if "name" not in d or not str(d["name"]).strip():
            raise ValidationError(f"scene-graph object {d.get('id')!r} has no name")
        attrs = d.get("attributes") or []
        if not isinstance(attrs, list):
            raise ValidationError(f"attributes of object {d.get('id')!r} must be a list")
        box = d.get("box")
        return cls(
            id=str(d.get("id", d["name"])),
            name=str(d["name"]).strip(),
            attributes=[str(a).strip() for a in attrs if str(a).strip()],
            box=tuple(float(v) for v in box) if box else None,  # type: ignore[arg-type]
        )


@dataclass
class SceneRelation:
    subject: str  # object id
    predicate: str
    object: str  # object id

    def to_dict(self) -> dict[str, Any]:
        return {"subject": self.subject, "predicate": self.predicate, "object": self.object}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "SceneRelation":
        try:
            return cls(subject=str(d["subject"]), predicate=str(d["predicate"]).strip(), object=str(d["object"]))
        except (KeyError, TypeError) as exc:
            raise ValidationError(f"relation needs subject, predicate and object: {d!r}") from exc


@dataclass
class SceneGraph:
    """Objects with attributes and optional boxes, and relations between object ids.

    >>> g = SceneGraph.from_dict({"objects": [{"id": "1", "name": "cat", "attributes": ["grey"]},
    ...                                       {"id": "2", "name": "sofa"}],
    ...                           "relations": [{"subject": "1", "predicate": "on", "object": "2"}]})
    >>> g.triplets()
    [('cat', 'on', 'sofa')]
    >>> SceneGraph.from_networkx(g.to_networkx()) == g
    True
    """

    objects: list[SceneObject] = field(default_factory=list)
    relations: list[SceneRelation] = field(default_factory=list)
    regions: list[str] = field(default_factory=list)  # free-text region descriptions (VG)

    def __post_init__(self) -> None:
        ids = [o.id for o in self.objects]
        if len(ids) != len(set(ids)):
            dup = sorted({i for i in ids if ids.count(i) > 1})
            raise ValidationError(f"scene graph has duplicate object ids: {dup[:5]}")
        known = set(ids)
        for r in self.relations:
            for end in (r.subject, r.object):
                if end not in known:
                    raise ValidationError(f"relation {r.subject}-{r.predicate}-{r.object} names unknown object id {end!r}")

    # -- access
    def object_by_id(self) -> dict[str, SceneObject]:
        return {o.id: o for o in self.objects}

    def object_names(self) -> list[str]:
        return [o.name for o in self.objects]

    def attribute_pairs(self) -> list[tuple[str, str]]:
        return [(o.name, a) for o in self.objects for a in o.attributes]

    def triplets(self) -> list[tuple[str, str, str]]:
        by_id = self.object_by_id()
        return [(by_id[r.subject].name, r.predicate, by_id[r.object].name) for r in self.relations]

    def is_empty(self) -> bool:
        return not self.objects

    # -- conversion
    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "objects": [o.to_dict() for o in self.objects],
            "relations": [r.to_dict() for r in self.relations],
        }
        if self.regions:
            d["regions"] = list(self.regions)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> "SceneGraph":
        if d is None:
            return cls()
        if not isinstance(d, dict):
            raise ValidationError(f"scene_graph must be an object, got {type(d).__name__}")
        objects = [SceneObject.from_dict(o) for o in d.get("objects") or []]
        relations = [SceneRelation.from_dict(r) for r in d.get("relations") or []]
        regions = [str(r) for r in d.get("regions") or []]
        return cls(objects=objects, relations=relations, regions=regions)

    def key(self) -> str:
        return content_key(self.to_dict())

    def to_networkx(self) -> nx.MultiDiGraph:
        g = nx.MultiDiGraph()
        for o in self.objects:
            g.add_node(o.id, name=o.name, attributes=list(o.attributes), box=o.box)
        for r in self.relations:
            g.add_edge(r.subject, r.object, predicate=r.predicate)
        g.graph["regions"] = list(self.regions)
        return g

    @classmethod
    def from_networkx(cls, g: nx.Graph) -> "SceneGraph":
        objects = [
            SceneObject(id=str(n), name=data.get("name", str(n)), attributes=list(data.get("attributes") or []),
                        box=tuple(data["box"]) if data.get("box") else None)
            for n, data in g.nodes(data=True)
        ]
        relations = [SceneRelation(str(u), data.get("predicate", ""), str(v)) for u, v, data in g.edges(data=True)]
        return cls(objects=objects, relations=relations, regions=list(g.graph.get("regions", [])))
