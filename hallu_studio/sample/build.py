"""Assemble the ``sample`` benchmark: photos + synthetic scenes, five domains each, and their questions."""

from __future__ import annotations

import os
import random
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from PIL import Image

from ..images import StoredImage
from ..importers.base import ParsedBenchmark
from ..model import Benchmark, Sample, SceneGraph, SceneObject
from .encode import encode_jpeg, fit_within
from .photos import VQAItem, load_photos, load_pixels
from .reefknot import reefknot_questions
from .stylize import STYLES, stylize
from .synthetic import describe, render
from .synthetic_vqa import synthetic_vqa

BENCHMARK = "sample"
CAPTION_QUESTION = "Describe the image in detail."


@dataclass
class SourceImage:
    name: str
    kind: str  # real | synthetic
    image: Image.Image
    graph: SceneGraph
    caption: str
    vqa: list[VQAItem]
    origin: str


def _sources(synthetic_scenes: int, seed: int) -> list[SourceImage]:
    out = []
    for p in load_photos():
        full = load_pixels(p.name)
        img = fit_within(full)
        out.append(SourceImage(p.name, "real", img, _scale_boxes(p.graph, img.width / full.width),
                               p.caption, p.vqa, p.source))
    for k in range(synthetic_scenes):
        scene_seed = seed * 100_003 + k
        scene = render(scene_seed)
        rng = random.Random(f"sample-vqa-{scene_seed}")
        out.append(SourceImage(f"synthetic_{k:03d}", "synthetic", scene.image, scene.graph, describe(scene),
                               synthetic_vqa(scene, rng), f"render_scene({scene_seed})"))
    return out


def _scale_boxes(graph: SceneGraph, factor: float) -> SceneGraph:
    """Boxes are written for the full-size photo; the stored image may be shrunk."""
    if factor == 1.0:
        return graph
    objects = [SceneObject(o.id, o.name, list(o.attributes),
                           tuple(round(v * factor, 1) for v in o.box) if o.box else None)  # type: ignore[arg-type]
               for o in graph.objects]
    return SceneGraph(objects=objects, relations=list(graph.relations), regions=list(graph.regions))


def _samples_for(src: SourceImage, domain: str, stored: StoredImage, seed: int) -> list[Sample]:
    base = f"{BENCHMARK}/{src.name}/{domain}"
    common: dict[str, Any] = {"benchmark": BENCHMARK, "image_key": f"{src.name}/{domain}",
                              "image_sha256": stored.sha256, "domain": domain, "source_kind": src.kind,
                              "scene_graph": src.graph}
    samples = [Sample(id=f"{base}/caption", task="caption", question=CAPTION_QUESTION,
                      reference_text=src.caption, reference_kind="dense", meta={"origin": src.origin}, **common)]
    if domain != "original":
        return samples
    for k, item in enumerate(src.vqa):
        samples.append(Sample(id=f"{base}/vqa/{k}", task="vqa", question=item.question, answer=item.answer,
                              gold_triplets=item.triplets, **common))
    counters = {"yes_no": 0, "mcq": 0, "open": 0}
    for q in reefknot_questions(src.graph, random.Random(f"sample-reefknot-{seed}-{src.name}")):
        k = counters[q.kind]
        counters[q.kind] += 1
        samples.append(Sample(id=f"{base}/{q.kind}/{k}", task=q.task, question=q.question, options=q.options,
                              answer=q.answer, gold_triplets=[q.triplet], relation_category=q.relation_category,
                              meta={"reefknot": q.kind, "asked_predicate": q.asked_predicate}, **common))
    return samples


def build_sample_benchmark(*, synthetic_scenes: int = 50, seed: int = 0, with_variants: bool = True) -> ParsedBenchmark:
    """The embedded offline benchmark. Deterministic: the same arguments give the same ids and bytes."""
    if synthetic_scenes < 0:
        raise ValueError(f"synthetic_scenes must be >= 0, got {synthetic_scenes}")
    parsed = ParsedBenchmark(benchmark=Benchmark(
        name=BENCHMARK,
        description="Embedded offline benchmark: packaged photos with hand-written scene graphs, "
                    "rendered CLEVR-like scenes, filter-stylized variants, Reefknot-style relation questions.",
        source="hallu_studio.sample",
        meta={"synthetic_scenes": synthetic_scenes, "seed": seed, "with_variants": with_variants}))
    domains = ("original",) + (STYLES if with_variants else ())
    jobs = [(src, domain) for src in _sources(synthetic_scenes, seed) for domain in domains]
    # Pillow's filters release the GIL: the variants render on every core (the first start waits on them).
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        encoded = list(pool.map(lambda job: encode_jpeg(stylize(job[0].image, job[1])), jobs))
    for (src, domain), stored in zip(jobs, encoded):
        parsed.images[stored.sha256] = stored
        parsed.samples.extend(_samples_for(src, domain, stored, seed))
    return parsed
