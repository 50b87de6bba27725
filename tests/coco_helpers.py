"""COCO-format annotation files made up by the tests (never COCO's own data): tiny hand-written ones, and
synthetic ones of a chosen size for timing the importer (``benchmarks/bench_import.py --datasets coco``).

Nothing here is a test.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, Iterable

from hallu_studio.lexicon.vocabularies import COCO_80

# COCO's category ids run 1..90 with gaps; the importer must go by the ids the file gives, so these have gaps too.
COCO_80_CATEGORIES = [{"id": i + 1 + i // 10, "name": name, "supercategory": "thing"} for i, name in enumerate(COCO_80)]
CATEGORY_ID = {c["name"]: c["id"] for c in COCO_80_CATEGORIES}


def image(image_id: int, split: str = "val2014") -> dict[str, Any]:
    return {"id": image_id, "file_name": f"COCO_{split}_{image_id:012d}.jpg", "width": 640, "height": 480,
            "license": 1, "coco_url": "", "date_captured": "2013-11-14 16:28:13"}


def caption(annotation_id: int, image_id: int, text: str) -> dict[str, Any]:
    return {"image_id": image_id, "id": annotation_id, "caption": text}


def instance(annotation_id: int, image_id: int, category: str | int, crowd: bool = False) -> dict[str, Any]:
    category_id = category if isinstance(category, int) else CATEGORY_ID[category]
    return {"segmentation": [[10.0, 10.0, 20.0, 10.0, 20.0, 20.0]], "area": 50.0, "iscrowd": int(crowd),
            "image_id": image_id, "bbox": [10.0, 10.0, 10.0, 10.0], "category_id": category_id, "id": annotation_id}


def write_captions(path: Path, images: Iterable[dict[str, Any]], annotations: Iterable[dict[str, Any]]) -> Path:
    # COCO's key order: the images come before the annotations.
    path.write_text(json.dumps({"info": {"description": "made up by a test", "year": 2014}, "images": list(images),
                                "licenses": [], "annotations": list(annotations)}))
    return path


def write_instances(path: Path, images: Iterable[dict[str, Any]], annotations: Iterable[dict[str, Any]],
                    categories: list[dict[str, Any]] | None = None) -> Path:
    # COCO's key order: the categories come last, after the annotations that name them.
    path.write_text(json.dumps({"info": {"description": "made up by a test", "year": 2014}, "images": list(images),
                                "licenses": [], "annotations": list(annotations),
                                "categories": COCO_80_CATEGORIES if categories is None else categories}))
    return path


def write_synthetic_split(folder: Path, split: str = "val2014", *, images: int = 40_000, captions: int = 200_000,
                          instances: int = 290_000, polygon_points: int = 24, seed: int = 0) -> tuple[Path, Path]:
    """``captions_<split>.json`` and ``instances_<split>.json`` of realistic size made of random words and
    polygons (COCO's val2014: 40,504 images, 202,654 captions, 291,875 instances, files of about 25 and 160 MB).
    Written record by record, so the writer never holds a whole file either."""
    rng = random.Random(seed)
    words = ("a man woman dog cat sitting standing on the in of with next to near table street field red "
             "white two three large small holding riding playing plate food bus train").split()
    folder.mkdir(parents=True, exist_ok=True)

    def dump(path: Path, head: dict[str, Any], items: Iterable[dict[str, Any]], tail: dict[str, Any]) -> Path:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(head)[:-1] + ', "annotations": [')
            for i, item in enumerate(items):
                fh.write((", " if i else "") + json.dumps(item))
            fh.write("]" + (", " + json.dumps(tail)[1:] if tail else "}"))
        return path

    head = {"info": {"description": "synthetic", "year": 2014}, "images": [image(i + 1, split) for i in range(images)],
            "licenses": [{"id": 1, "name": "made up", "url": ""}]}
    captions_path = dump(folder / f"captions_{split}.json", head, (
        caption(k + 1, 1 + k % images, " ".join(rng.choice(words) for _ in range(rng.randint(8, 14))).capitalize() + ".")
        for k in range(captions)), {})

    def polygon() -> list[list[float]]:
        return [[round(rng.uniform(0, 640), 2) for _ in range(2 * polygon_points)]]

    instances_path = dump(folder / f"instances_{split}.json", head, (
        {"segmentation": polygon(), "area": round(rng.uniform(10, 90_000), 4), "iscrowd": int(rng.random() < 0.01),
         "image_id": rng.randint(1, images), "bbox": [round(rng.uniform(0, 600), 2) for _ in range(4)],
         "category_id": rng.choice(COCO_80_CATEGORIES)["id"], "id": k + 1} for k in range(instances)),
        {"categories": COCO_80_CATEGORIES})
    return captions_path, instances_path
