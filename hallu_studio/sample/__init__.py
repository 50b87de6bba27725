"""The embedded sample benchmark (``sample``): builds offline, deterministic, from installed packages.

>>> from hallu_studio.sample import render_scene, stylize
>>> img, graph = render_scene(0)
>>> stylize(img, "sketch").size == img.size
True
"""

from .build import BENCHMARK, build_sample_benchmark
from .encode import encode_jpeg
from .photos import load_photos, load_pixels
from .reefknot import RelationQuestion, reefknot_questions, relation_category
from .stylize import DOMAINS, STYLES, stylize
from .synthetic import render_scene

__all__ = ["BENCHMARK", "DOMAINS", "STYLES", "RelationQuestion", "build_sample_benchmark", "encode_jpeg",
           "load_photos", "load_pixels", "reefknot_questions", "relation_category", "render_scene", "stylize"]
