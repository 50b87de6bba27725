"""Benchmark items and what is recorded about them: images, samples, benchmarks, runs, responses, scores."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from .base import NAMED_VOCABULARIES, REFERENCE_KINDS, RELATION_CATEGORIES, TASKS, ValidationError, content_key
from .graph import SceneGraph


@dataclass
class Sample:
    """One benchmark item: an image, its scene graph and (for QA tasks) a question."""

    id: str  # unique in the store: "<benchmark>/<source id>"
    benchmark: str
    image_key: str  # the dataset's own image id (GQA / VG id, file name ...)
    task: str = "caption"
    image_sha256: str | None = None  # None when the image is missing
    domain: str = "original"  # VISCON style tag: original, cartoon, sketch, oil, line
    source_kind: str = "real"  # real | synthetic
    scene_graph: SceneGraph = field(default_factory=SceneGraph)
    question: str | None = None
    options: list[str] = field(default_factory=list)
    answer: str | None = None  # gold answer / label (MCQ: the letter, Y/N: yes|no)
    gold_triplets: list[tuple[str, str, str]] = field(default_factory=list)
    relation_category: str | None = None  # perception | cognition (Reefknot)
    # Human captions of the image: one text or a list; a string is read as a one-element list (``reference_captions``),
    # whatever its length: the JSON type never decides what the text settles, ``reference_kind`` does.
    reference_text: str | list[str] | None = None
    # The names of the objects in the image, complete within ``reference_vocabulary`` (COCO's instance
    # annotations: "coco-80", or a list of category names): inside it a missing object is absent, outside it the
    # list says nothing. None: no object list.
    reference_objects: list[str] | None = None
    reference_vocabulary: str | list[str] | None = None
    # What ``reference_text`` settles (``REFERENCE_KINDS``): "captions", short captions, open-world (each settles
    # what it mentions; what none mentions may still be in the picture: COCO's five); "dense", a dense description
    # of the whole image (DCI's, IIW's): what it does not name is not in the picture. Read in one place only,
    # ``reference_scope.Scope.of_sample``.
    reference_kind: str = "captions"
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def reference_captions(self) -> list[str]:
        """The human captions as a list (empty when there are none)."""
        texts = [self.reference_text] if isinstance(self.reference_text, str) else list(self.reference_text or [])
        return [t for t in texts if t.strip()]

    def __post_init__(self) -> None:
        if isinstance(self.reference_text, (list, tuple)):
            if not all(isinstance(t, str) for t in self.reference_text):
                raise ValidationError(f"sample {self.id}: reference_text must be a string or a list of strings")
            self.reference_text = [t.strip() for t in self.reference_text if t.strip()] or None
        elif self.reference_text is not None and not isinstance(self.reference_text, str):
            raise ValidationError(f"sample {self.id}: reference_text must be a string or a list of strings, "
                                  f"got {type(self.reference_text).__name__}")
        if self.reference_kind not in REFERENCE_KINDS:
            raise ValidationError(f"sample {self.id}: reference_kind must be one of {REFERENCE_KINDS} (short captions, "
                                  f"open-world; or a dense description that names what is there), "
                                  f"got {self.reference_kind!r}")
        if self.reference_objects is not None:
            if not isinstance(self.reference_objects, (list, tuple)) or not all(
                    isinstance(o, str) for o in self.reference_objects):
                raise ValidationError(f"sample {self.id}: reference_objects must be a list of object names")
            self.reference_objects = [o.strip() for o in self.reference_objects if o.strip()]
        if self.reference_vocabulary is not None:
            if self.reference_objects is None:
                raise ValidationError(f"sample {self.id}: reference_vocabulary names what reference_objects is "
                                      "complete for, and there is no reference_objects")
            self._check_vocabulary()
        if self.task not in TASKS:
            raise ValidationError(f"sample {self.id}: task must be one of {TASKS}, got {self.task!r}")
        if self.relation_category is not None and self.relation_category not in RELATION_CATEGORIES:
            raise ValidationError(
                f"sample {self.id}: relation_category must be one of {RELATION_CATEGORIES}, got {self.relation_category!r}")
        self.gold_triplets = [tuple(str(x) for x in t) for t in self.gold_triplets]  # type: ignore[misc]
        for t in self.gold_triplets:
            if len(t) != 3:
                raise ValidationError(f"sample {self.id}: gold triplet {t!r} does not have three parts")

    def _check_vocabulary(self) -> None:
        """A vocabulary by name (``NAMED_VOCABULARIES``) or a list of at least one name, as
        ``lexicon.vocabularies.vocabulary`` reads it (the data model checks the name, the lexicon holds the words)."""
        where = f"sample {self.id}: reference_vocabulary"
        if isinstance(self.reference_vocabulary, str):
            name = self.reference_vocabulary.strip().lower()
            if name not in NAMED_VOCABULARIES:
                raise ValidationError(f"{where}: unknown object vocabulary {name!r}; "
                                      f"known: {', '.join(NAMED_VOCABULARIES)}, or a list of names")
            return
        if isinstance(self.reference_vocabulary, (list, tuple)):
            self.reference_vocabulary = [str(v) for v in self.reference_vocabulary]
        names = [n for n in self.reference_vocabulary or () if isinstance(n, str) and n.strip()]
        if not names:
            raise ValidationError(f"{where}: an object vocabulary needs at least one name")

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["scene_graph"] = self.scene_graph.to_dict()
        d["gold_triplets"] = [list(t) for t in self.gold_triplets]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Sample":
        d = dict(d)
        d["scene_graph"] = SceneGraph.from_dict(d.get("scene_graph"))
        d["gold_triplets"] = [tuple(t) for t in d.get("gold_triplets") or []]
        d["options"] = list(d.get("options") or [])
        d["meta"] = dict(d.get("meta") or {})
        if d.get("reference_kind") is None:  # absent or null: the default, short captions
            d.pop("reference_kind", None)
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise ValidationError(f"sample {d.get('id')!r}: unknown fields {sorted(unknown)}")
        return cls(**d)


@dataclass
class Benchmark:
    name: str
    description: str = ""
    source: str = ""  # where it was imported from
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class Run:
    """The manifest of one model run: everything needed to reproduce it."""

    id: str
    benchmark: str
    model: str
    backend: str  # transformers | openai | probe | recorded
    checkpoint: str = ""  # hub revision, local path hash or server-reported model
    prompt: str = ""
    generation: dict[str, Any] = field(default_factory=dict)
    mitigation: str = "none"
    seed: int = 0
    tool_version: str = ""
    synthetic: bool = False  # probe models: label as synthetic wherever shown
    meta: dict[str, Any] = field(default_factory=dict)

    @staticmethod
    def make_id(benchmark: str, model: str, backend: str, prompt: str, generation: dict[str, Any],
                mitigation: str, seed: int) -> str:
        """Runs with the same settings share an id, so re-running resumes instead of duplicating."""
        return "run-" + content_key(benchmark, model, backend, prompt, generation, mitigation, seed)[:16]

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Run":
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})


@dataclass
class Response:
    """A model's answer to one sample in one run."""

    run_id: str
    sample_id: str
    text: str
    signals: dict[str, Any] = field(default_factory=dict)  # logprobs, entropy, logit lens, injected concepts
    id: str = ""

    def __post_init__(self) -> None:
        if not self.id:
            self.id = self.make_id(self.run_id, self.sample_id)

    @staticmethod
    def make_id(run_id: str, sample_id: str) -> str:
        return "resp-" + content_key(run_id, sample_id)[:20]


@dataclass
class Score:
    """One metric's result for one response under one configuration.

    ``values`` holds the numbers (a value may be None with ``undefined_reason``
    saying why); ``evidence`` whatever the app shows to explain them.
    """

    response_id: str
    metric: str
    config_key: str
    values: dict[str, Any]
    evidence: dict[str, Any] = field(default_factory=dict)
    undefined_reason: str | None = None
