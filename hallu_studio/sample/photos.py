"""Real photographs that ship inside installed packages, with hand-written scene graphs.

The pixels are read at run time from scikit-image, scikit-learn and matplotlib
(nothing is copied into this repository); the scene graphs, captions and VQA
questions in ``data/sample/photos.json`` were written by hand for HalluStudio.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from ..config import DATA_DIR
from ..model import SceneGraph, ValidationError

PHOTOS_FILE = DATA_DIR / "sample" / "photos.json"


@dataclass
class VQAItem:
    question: str
    answer: str
    triplets: list[tuple[str, str, str]] = field(default_factory=list)


@dataclass
class Photo:
    name: str
    source: str
    caption: str
    graph: SceneGraph
    vqa: list[VQAItem]


def _skimage(name: str) -> Callable[[], np.ndarray]:
    def load() -> np.ndarray:
        import skimage.data

        data = getattr(skimage.data, name)()
        # stereo_motorcycle returns (left, right, disparity): the left view is the photo
        return data[0] if isinstance(data, tuple) else data
    return load


def _sklearn(filename: str) -> Callable[[], np.ndarray]:
    def load() -> np.ndarray:
        from sklearn.datasets import load_sample_image

        return load_sample_image(filename)
    return load


def _matplotlib(filename: str) -> Callable[[], np.ndarray]:
    def load() -> np.ndarray:
        import matplotlib

        with Image.open(Path(matplotlib.get_data_path()) / "sample_data" / filename) as im:
            return np.asarray(im.convert("RGB"))
    return load


# Only files that load offline: several skimage.data images need a pooch download.
PIXEL_LOADERS: dict[str, Callable[[], np.ndarray]] = {
    "astronaut": _skimage("astronaut"),
    "chelsea": _skimage("chelsea"),
    "coffee": _skimage("coffee"),
    "rocket": _skimage("rocket"),
    "motorcycle": _skimage("stereo_motorcycle"),
    "camera": _skimage("camera"),
    "china": _sklearn("china.jpg"),
    "flower": _sklearn("flower.jpg"),
    "grace_hopper": _matplotlib("grace_hopper.jpg"),
}


def load_pixels(name: str) -> Image.Image:
    """The photo ``name`` as an RGB PIL image, read from the installed package."""
    if name not in PIXEL_LOADERS:
        raise KeyError(f"no installed photo named {name!r}; known: {sorted(PIXEL_LOADERS)}")
    arr = PIXEL_LOADERS[name]()
    return Image.fromarray(np.asarray(arr)).convert("RGB")


def _photo_from_record(rec: dict[str, Any]) -> Photo:
    name = rec.get("name", "?")
    try:
        graph = SceneGraph.from_dict({
            "objects": [{"id": i, "name": n, "attributes": a, "box": b} for i, n, a, b in rec["objects"]],
            "relations": [{"subject": s, "predicate": p, "object": o} for s, p, o in rec["relations"]],
        })
        vqa = [VQAItem(q["question"], q["answer"], [tuple(t) for t in q["triplets"]]) for q in rec["vqa"]]
        return Photo(name=name, source=rec["source"], caption=rec["caption"], graph=graph, vqa=vqa)
    except (KeyError, ValueError, TypeError) as exc:
        raise ValidationError(f"{PHOTOS_FILE.name} photo {name!r}: {exc}") from exc


def load_photos(path: Path = PHOTOS_FILE) -> list[Photo]:
    """The hand-written photo annotations, validated (relations must name existing ids)."""
    with open(path, encoding="utf-8") as fh:
        records = json.load(fh)["photos"]
    photos = [_photo_from_record(r) for r in records]
    unknown = [p.name for p in photos if p.name not in PIXEL_LOADERS]
    if unknown:
        raise ValidationError(f"{path.name}: photos {unknown} have no installed image loader")
    return photos
