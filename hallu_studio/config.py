"""Explicit configuration: one ``Settings`` object, read from a TOML file and the environment.

Precedence (lowest to highest): the defaults below, ``hallu-studio.toml`` (or the
file named by ``HALLU_STUDIO_CONFIG``), environment variables. One exception: ``OPENAI_BASE_URL``,
which the OpenAI library and other tools read too, is only a fallback for ``llm.base_url``: it is
used when neither the file nor ``HALLU_STUDIO_LLM_BASE_URL`` sets it. ``Settings.origin`` says
where each value in force came from. Every setting that changes a metric's scores is part of that
metric's configuration, hence of its scores' ``config_key`` (``metrics.keys``; each metric's spec lists
the settings it depends on), so that scores computed under different settings never mix.

Each setting declares its help text and, for a choice, its allowed values (``setting``
below): loading refuses a value outside them, naming the setting, where it came from
and what is allowed; ``config_edit.describe_settings`` lists them all for the Settings view and
``config_edit.write_settings`` edits the file.

>>> load_settings(env={"HALLU_STUDIO_CONFIG": "/nonexistent.toml", "HALLU_STUDIO_EMD_EMPTY_SIDE": "zero"})
Traceback (most recent call last):
...
ValueError: environment variable HALLU_STUDIO_EMD_EMPTY_SIDE: scoring.emd_empty_side = 'zero' is not allowed; choose undefined | unit_cost
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence


REPO_ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = REPO_ROOT / "data"
ASSETS_DIR = REPO_ROOT / "assets"

# Offline defaults for every process that imports HalluStudio: model hubs are not
# assumed reachable, and nothing phones home. A user who wants downloads sets
# HF_HUB_OFFLINE=0 explicitly.
OFFLINE_ENV_DEFAULTS = {
    "GRADIO_ANALYTICS_ENABLED": "False",
    "HF_HUB_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
    "TOKENIZERS_PARALLELISM": "false",
}

DEFAULT_CONFIG_FILE = "hallu-studio.toml"

# The allowed values of each choice setting; the components that act on a choice dispatch on these names.
EXTRACTORS: tuple[str, ...] = ("parser", "llm")
REVISERS: tuple[str, ...] = ("rule", "llm")
TRIHE_JUDGES: tuple[str, ...] = ("graph", "embedding", "nli", "llm", "vlm")
# The wording the image judge asks each claim in (``judges.vlm_judge.TEMPLATES``): FaithScore's verification question
# or Tri-HE's judge question, asked of the image rather than of a scene graph.
VLM_JUDGE_TEMPLATES: tuple[str, ...] = ("faithscore", "tri-he")
# What happens to a claim the reference judge leaves unverifiable when an image judge is configured.
VLM_JUDGE_UNSETTLED: tuple[str, ...] = ("image", "reference")
TRIHE_EXTRACTIONS: tuple[str, ...] = ("parser", "llm-trihe")
UNVERIFIABLE_POLICIES: tuple[str, ...] = ("scene-graph", "hallucination", "ignore")
HALFSCORE_MATCHERS: tuple[str, ...] = ("graph", "embedding", "llm")
EMD_EMPTY_SIDE_POLICIES: tuple[str, ...] = ("undefined", "unit_cost")
EMD_GROUND_COSTS: tuple[str, ...] = ("grounded", "cosine")
# How a metric reads an answer: the project's reading, or the paper's released code's (docs/guide/reproducing-papers.md).
READINGS: tuple[str, ...] = ("studio", "released")
# How answer accuracy reads the option an MCQ answer chooses: the reading of the toolkit whose file the sample came
# from (VLMEvalKit's for its tables, else the studio's), the studio's, or VLMEvalKit's exact matching everywhere.
ACCURACY_READINGS: tuple[str, ...] = ("toolkit", "studio", "vlmevalkit")
CHAIR_VOCABULARIES: tuple[str, ...] = ("image", "benchmark", "coco-80")
# How AMBER's metric may judge two words alike: the same word only, or AMBER's check with this spaCy model.
AMBER_SIMILARITIES: tuple[str, ...] = ("same-word", "en_core_web_lg")
AMBER_TAGGERS: tuple[str, ...] = ("nltk", "spacy")  # metrics.amber_nouns.NOUN_READERS
# What CHAIR takes an image to hold, in a fixed vocabulary: its object list and the vocabulary's objects its reference
# captions mention (published), or its object list alone (objects: captions omit things, so they never settle).
CHAIR_GROUND_TRUTHS: tuple[str, ...] = ("published", "objects")


def parse_base_urls(value: str | Sequence[str] | None) -> list[str]:
    """``"http://a/v1, http://b/v1"`` or a list -> ``["http://a/v1", "http://b/v1"]`` (no trailing ``/``).

    >>> parse_base_urls("http://a:8000/v1/, http://b:8000/v1")
    ['http://a:8000/v1', 'http://b:8000/v1']
    """
    if value is None:
        return []
    items = value.split(",") if isinstance(value, str) else list(value)
    return [str(u).strip().rstrip("/") for u in items if str(u).strip()]


# An embedding model served over HTTP (``scoring.embedding_model``): ``openai:<model>@<url>[,<url>]``.
SERVER_PREFIX = "openai:"


def server_embedding_spec(name: str) -> tuple[str, list[str]] | None:
    """``"openai:<model>@<url>[,<url>]"`` -> ``(model, urls)``; None for a local model name.

    >>> server_embedding_spec("openai:BAAI/bge-small-en@http://127.0.0.1:8080/v1")
    ('BAAI/bge-small-en', ['http://127.0.0.1:8080/v1'])
    """
    if not name.startswith(SERVER_PREFIX):
        return None
    model, at, urls = name[len(SERVER_PREFIX):].rpartition("@")
    if not at or not model or not parse_base_urls(urls):
        raise ValueError(f"a server embedding model is openai:<model>@<base url>, got {name!r}")
    return model, parse_base_urls(urls)


def embedding_identity(name: str) -> str:
    """What an embedding model's vectors are known by: a server model without its URLs (``embedding.py``).

    >>> embedding_identity("openai:m@http://a/v1,http://b/v1"), embedding_identity("all-MiniLM-L6-v2")
    ('openai:m', 'all-MiniLM-L6-v2')
    """
    spec = server_embedding_spec(name)
    return name if spec is None else SERVER_PREFIX + spec[0]


def apply_offline_env_defaults() -> None:
    for key, value in OFFLINE_ENV_DEFAULTS.items():
        os.environ.setdefault(key, value)


def setting(default: Any, help: str, *, choices: tuple[str, ...] | None = None) -> Any:
    """A settings field with its help text and, for a choice, its allowed values."""
    if choices is not None and default not in choices:
        raise ValueError(f"default {default!r} is not among the choices {choices}")
    return field(default=default, metadata={"help": help, "choices": choices})


@dataclass
class LLMSettings:
    """An OpenAI-compatible chat endpoint (OpenAI, vLLM, SGLang, Ollama, llama.cpp), or several replicas of one.

    ``base_url`` is one URL or a list (TOML list; comma-separated in the environment): calls are
    spread over the replicas (see ``hallu_studio.llm.dispatch``). A try's timeout is
    ``timeout_s + timeout_per_token_s × (prompt tokens + output tokens)``, doubled after
    a timeout; ``concurrency`` is the most calls in flight, lowered while the server is saturated.
    Output tokens: the call's ``max_tokens`` (every LLM step sends its own cap, ``llm/dispatch.py``),
    else ``expected_output_tokens``.
    """

    base_url: str | list[str] | None = setting(None, "OpenAI-compatible endpoint URL, e.g. http://127.0.0.1:8000/v1, "
                                                     "or a list of replicas; unset: no LLM, the offline methods are used")
    model: str | None = setting(None, "the served model name")
    api_key_env: str = setting("OPENAI_API_KEY", "name of the environment variable holding the API key")
    timeout_s: float = setting(60.0, "seconds a request may take before its prompt and answer are counted")
    timeout_per_token_s: float = setting(0.02, "seconds added to a request's timeout per prompt and expected "
                                               "output token")
    expected_output_tokens: int = setting(256, "output tokens a request's timeout allows for when the call "
                                               "sets no max_tokens (the LLM steps set their own caps)")
    max_retries: int = setting(4, "extra tries per request, with exponential back-off")
    concurrency: int = setting(8, "most requests in flight at once (lowered while the server is saturated)")
    temperature: float = setting(0.0, "sampling temperature (0 keeps answers repeatable)")

    @property
    def base_urls(self) -> list[str]:
        return parse_base_urls(self.base_url)

    @property
    def configured(self) -> bool:
        return bool(self.base_urls and self.model)

    def api_key(self) -> str:
        # Local servers accept any key; the client library insists on one.
        return os.environ.get(self.api_key_env) or "EMPTY"


@dataclass
class ScoringSettings:
    embedding_model: str = setting("all-MiniLM-L6-v2", "sentence-transformers model available offline")
    nli_model: str | None = setting(None, "a Hugging Face NLI cross-encoder (local path or cached name) for "
                                          "trihe_judge = nli and Reefknot's VQA check; unset: none")
    extractor: str = setting("parser", "concept extraction for EMD, Evaluate-by-Edit, HalFscore and CHAIR, and "
                                       "of dense reference captions (Tri-HE's too): the offline "
                                       "SceneGraphParser, or an LLM with VISCON's Figure 11 prompts",
                             choices=EXTRACTORS)
    reviser: str = setting("rule", "Evaluate-by-Edit's reviser: offline rules, or an LLM with VISCON's "
                                   "Figure 12 query API", choices=REVISERS)
    trihe_judge: str = setting("graph", "Tri-HE's triplet judge: the scene-graph alignment judge (offline "
                                        "default), Tri-HE's released embedding check, an NLI model, an LLM "
                                        "(the paper's two questions), or an LVLM that looks at the image (vlm: "
                                        "every claim asked of scoring.vlm_judge_model, no reference needed)",
                               choices=TRIHE_JUDGES)
    vlm_judge_model: str | None = setting(None, "the image judge: an LVLM given as run --model gives one "
                                                "(transformers:<hub id or path>, openai:<model>@<url>), asked of "
                                                "each claim with the image (docs/guide/image-judge.md); unset: no "
                                                "image judge")
    vlm_judge_template: str = setting("faithscore", "the image judge's question: FaithScore's verification wording "
                                                    "(\"Statement: ... Is this statement is right according to the "
                                                    "image?\") or Tri-HE's judge question asked of the image",
                                      choices=VLM_JUDGE_TEMPLATES)
    vlm_judge_unsettled: str = setting("image", "with an image judge configured, what Tri-HE's, HalFscore's and the "
                                                "reviser's reference leaves unverifiable (and every claim of a sample "
                                                "with no reference): asked of the image judge (image), or left as the "
                                                "reference judge reads it (reference)", choices=VLM_JUDGE_UNSETTLED)
    vlm_judge_concurrency: int = setting(8, "image judge: most questions in flight to a server (openai:), or "
                                            "questions per batch on the GPU (transformers:)")
    graph_grounding_threshold: float = setting(0.8, "graph judge and graph matcher: cosine at or above which a "
                                                    "name the lexicon does not relate grounds to a graph node")
    trihe_extraction: str = setting("parser", "where Tri-HE's triplets come from: the offline SceneGraphParser, "
                                              "or Tri-HE's own triplet prompt through [llm]",
                                    choices=TRIHE_EXTRACTIONS)
    unverifiable: str = setting("scene-graph", "what a reference can neither confirm nor contradict, in Tri-HE's "
                                               "hallucinated share and HalFscore's precision: a hallucination "
                                               "against a complete scene graph (as the papers count it) and left "
                                               "out against open-world references, captions and object lists "
                                               "(scene-graph); always a hallucination; or never (ignore)",
                                choices=UNVERIFIABLE_POLICIES)
    unverifiable_weight: float = setting(0.1, "with unverifiable = scene-graph: the fraction of a hallucination each "
                                              "unverifiable claim counts as against open-world references "
                                              "(captions, object lists), from 0 (left out) to 1 (counted whole); "
                                              "0.1 agrees best with people on three of four published studies "
                                              "(docs/validity.md)")
    # Tri-HE's released embedding-similarity check (see docs/metrics_judges.md).
    trihe_reference_threshold: float = setting(0.5, "embedding judge: cosine above which a reference triplet "
                                                    "is relevant to a claim")
    trihe_support_threshold: float = setting(0.6, "embedding judge: cosine above which a claim is supported")
    trihe_top_k: int = setting(3, "embedding and NLI judges: reference triplets compared with each claim")
    nli_threshold: float = setting(0.6, "NLI judge: entailment probability above which a claim is supported")
    halfscore_matcher: str = setting("graph", "HalFscore's concept matcher: scene-graph grounding (offline default), "
                                              "embedding cosine, or an LLM (the A.8 prompt)", choices=HALFSCORE_MATCHERS)
    halfscore_match_threshold: float = setting(0.7, "HalFscore embedding matcher: cosine at which two concepts "
                                                    "match")
    emd_empty_side: str = setting("unit_cost", "EMD when the reference or the response has no concept of a type: "
                                               "100 (all mass moved to an unrelated concept) or undefined (left "
                                               "out, which flatters short answers)",
                                  choices=EMD_EMPTY_SIDE_POLICIES)
    emd_ground_cost: str = setting("grounded", "EMD's cost between two concepts: grounded (the scene-graph "
                                               "grounding's 0 for a concept the reference states, 2 for one it "
                                               "contradicts, else 1 - cosine; counts as attributes) or cosine "
                                               "(VISCON as published: 1 - cosine only)",
                                   choices=EMD_GROUND_COSTS)
    pope_reading: str = setting("studio", "POPE's answer reading: the first sentence's words in any case, split on "
                                          "any space, commas read as spaces (studio); or POPE's evaluate.py byte "
                                          "for byte: commas deleted, split on single spaces, no only from No, no, "
                                          "not (released)", choices=READINGS)
    reefknot_reading: str = setting("studio", "Reefknot's yes/no and multiple-choice reading: the word yes, the "
                                              "answer's first letter after spaces (studio); or the released code: "
                                              "yes anywhere in the text, the first character as it stands "
                                              "(released)", choices=READINGS)
    accuracy_reading: str = setting("toolkit", "how answer accuracy reads the option a multiple-choice answer "
                                               "chooses: VLMEvalKit's exact matching (can_infer) on samples "
                                               "imported from VLMEvalKit's tables, the studio's elsewhere "
                                               "(toolkit); the studio's letter-and-option reading everywhere "
                                               "(studio); or VLMEvalKit's everywhere (vlmevalkit)",
                                    choices=ACCURACY_READINGS)
    chair_reading: str = setting("studio", "CHAIR's reading: the extractor's objects, each once, COCO names with "
                                           "WordNet kinds and the lexicon's grounding (studio); or CHAIR's released "
                                           "code: every occurrence of a word of its own synonym table (released)",
                                 choices=READINGS)
    chair_vocabulary: str = setting("image", "the objects CHAIR counts when a sample names no reference_vocabulary "
                                             "of its own: every object against the image's scene graph (image), "
                                             "only names some image of the benchmark lists (benchmark), or COCO's "
                                             "80 categories (coco-80)", choices=CHAIR_VOCABULARIES)
    amber_similarity: str = setting("same-word", "AMBER's check of a noun against the image's objects beyond its "
                                                 "word lists: a word is like itself only (same-word), or spaCy's "
                                                 "en_core_web_lg word vectors above 0.8, as AMBER's inference.py "
                                                 "(the model must be installed)", choices=AMBER_SIMILARITIES)
    amber_tagger: str = setting("nltk", "which tagger reads AMBER's nouns: NLTK's averaged perceptron tagger with "
                                        "the English model shipped in the package, as AMBER's inference.py (nltk); "
                                        "or spaCy's small English pipeline, for comparison (spacy)",
                                choices=AMBER_TAGGERS)
    chair_ground_truth: str = setting("published", "what CHAIR takes an image to hold in a fixed vocabulary (COCO-80): "
                                                   "its object list or instances and the vocabulary's objects its "
                                                   "reference captions mention, captions alone when it has no list, "
                                                   "as Rohrbach et al. publish (published); or its object list alone, "
                                                   "a sample with captions only left undefined (objects)",
                                      choices=CHAIR_GROUND_TRUTHS)
    batch_size: int = setting(64, "responses per scoring transaction (not part of any score's config key)")
    workers: int = setting(0, "processes that score a pass's batches side by side (score --workers; the app's Run view "
                              "and first start): 0 is one per core of this machine, 1 scores in the app's or the "
                              "command's own process; each loads its own models (not part of any config key)")

    @property
    def embedding_identity(self) -> str:
        """The embedding model as scores name it: a served one without its URLs (see ``embedding.py``)."""
        return embedding_identity(self.embedding_model)


@dataclass
class DecodingSettings:
    """Reefknot's Detect-then-Calibrate defaults (Algorithm 1)."""

    dtc_alpha: float = setting(0.1, "Detect-then-Calibrate α: entropy above which a token is calibrated")
    dtc_lambda: int = setting(2, "Detect-then-Calibrate λ: how many earlier layers are consulted")
    dtc_gamma: float = setting(0.9, "Detect-then-Calibrate γ: weight of the final layer's distribution")
    entropy_reading: str = setting("studio", "Reefknot's answer entropy (Detect-then-Calibrate's detection and the "
                                             "Reefknot metric's flag): over the candidates' probabilities "
                                             "renormalised to sum to 1, flagged above γ (studio); or over their raw "
                                             "probabilities as the released code takes them, flagged at γ and above "
                                             "(released)", choices=READINGS)


@dataclass
class Settings:
    db: str | None = setting(None, "DuckDB store file; unset: $XDG_DATA_HOME/hallu-studio/store.duckdb")
    llm: LLMSettings = field(default_factory=LLMSettings)
    scoring: ScoringSettings = field(default_factory=ScoringSettings)
    decoding: DecodingSettings = field(default_factory=DecodingSettings)
    source: str | None = None  # the TOML file these settings were read from, if any (not a setting)
    # Where each setting not at its default came from: "file" or "env:VARIABLE" (not a setting; see ``origin``).
    origins: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def origin(self, name: str) -> str:
        """Where setting ``name`` ("llm.base_url") got its value: the settings file, an environment variable,
        or the default.

        >>> load_settings(env={"HALLU_STUDIO_CONFIG": "/nonexistent.toml", "OPENAI_BASE_URL": "http://h/v1"}
        ...               ).origin("llm.base_url")
        'environment variable OPENAI_BASE_URL'
        """
        origin = self.origins.get(name, "default")
        if origin == "file":
            return f"settings file {self.source}"
        if origin.startswith("env:"):
            return f"environment variable {origin[4:]}"
        return origin



ENV_MAP: dict[str, tuple[str, str, type]] = {
    "HALLU_STUDIO_DB": ("", "db", str),
    "HALLU_STUDIO_LLM_BASE_URL": ("llm", "base_url", str),
    "OPENAI_BASE_URL": ("llm", "base_url", str),
    "HALLU_STUDIO_LLM_MODEL": ("llm", "model", str),
    "HALLU_STUDIO_EMBEDDING_MODEL": ("scoring", "embedding_model", str),
    "HALLU_STUDIO_WORKERS": ("scoring", "workers", int),
    "HALLU_STUDIO_NLI_MODEL": ("scoring", "nli_model", str),
    "HALLU_STUDIO_EXTRACTOR": ("scoring", "extractor", str),
    "HALLU_STUDIO_REVISER": ("scoring", "reviser", str),
    "HALLU_STUDIO_TRIHE_JUDGE": ("scoring", "trihe_judge", str),
    "HALLU_STUDIO_VLM_JUDGE_MODEL": ("scoring", "vlm_judge_model", str),
    "HALLU_STUDIO_VLM_JUDGE_TEMPLATE": ("scoring", "vlm_judge_template", str),
    "HALLU_STUDIO_VLM_JUDGE_UNSETTLED": ("scoring", "vlm_judge_unsettled", str),
    "HALLU_STUDIO_VLM_JUDGE_CONCURRENCY": ("scoring", "vlm_judge_concurrency", int),
    "HALLU_STUDIO_TRIHE_EXTRACTION": ("scoring", "trihe_extraction", str),
    "HALLU_STUDIO_UNVERIFIABLE": ("scoring", "unverifiable", str),
    "HALLU_STUDIO_UNVERIFIABLE_WEIGHT": ("scoring", "unverifiable_weight", float),
    "HALLU_STUDIO_HALFSCORE_MATCHER": ("scoring", "halfscore_matcher", str),
    "HALLU_STUDIO_EMD_EMPTY_SIDE": ("scoring", "emd_empty_side", str),
    "HALLU_STUDIO_EMD_GROUND_COST": ("scoring", "emd_ground_cost", str),
    "HALLU_STUDIO_POPE_READING": ("scoring", "pope_reading", str),
    "HALLU_STUDIO_REEFKNOT_READING": ("scoring", "reefknot_reading", str),
    "HALLU_STUDIO_CHAIR_READING": ("scoring", "chair_reading", str),
    "HALLU_STUDIO_ACCURACY_READING": ("scoring", "accuracy_reading", str),
    "HALLU_STUDIO_CHAIR_VOCABULARY": ("scoring", "chair_vocabulary", str),
    "HALLU_STUDIO_AMBER_SIMILARITY": ("scoring", "amber_similarity", str),
    "HALLU_STUDIO_AMBER_TAGGER": ("scoring", "amber_tagger", str),
    "HALLU_STUDIO_CHAIR_GROUND_TRUTH": ("scoring", "chair_ground_truth", str),
    "HALLU_STUDIO_ENTROPY_READING": ("decoding", "entropy_reading", str),
}

# Variables other tools read too: each only fills its setting when neither the settings file nor a project
# variable sets it (OPENAI_BASE_URL silently beat the file and HALLU_STUDIO_LLM_BASE_URL before).
_FALLBACK_ENV = frozenset({"OPENAI_BASE_URL"})

_SECTIONS: dict[str, type] = {"": Settings, "llm": LLMSettings, "scoring": ScoringSettings,
                              "decoding": DecodingSettings}


def dotted_setting(section: str, key: str) -> str:
    return f"{section}.{key}" if section else key


def setting_fields() -> dict[str, tuple[str, type, dataclasses.Field[Any]]]:
    """Dotted name -> (section, settings class, field) of every setting, in declaration order."""
    return {dotted_setting(section, f.name): (section, cls, f) for section, cls in _SECTIONS.items()
            for f in dataclasses.fields(cls) if "help" in f.metadata}


def value_type(cls: type, key: str) -> tuple[type, bool]:
    """(the value's type, whether it may be unset) of field ``key`` of a settings class."""
    hint = typing.get_type_hints(cls)[key]
    args = typing.get_args(hint)
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        return next(a for a in args if a is not type(None)), type(None) in args
    return hint, False


_TYPE_WORDS = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}


def checked_setting(section: str, key: str, value: Any, where: str) -> Any:
    """``value`` for setting ``section.key``, or a ValueError naming the setting, ``where`` and what is allowed."""
    cls = _SECTIONS[section]
    kind, optional = value_type(cls, key)
    name = dotted_setting(section, key)
    if value is None:
        if optional:
            return None
        raise ValueError(f"{where}: {name} must be set")
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if (section, key) == ("llm", "base_url") and isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value  # a list of replicas (see LLMSettings)
    if not isinstance(value, kind) or (kind in (int, float) and isinstance(value, bool)):
        raise ValueError(f"{where}: {name} must be {_TYPE_WORDS.get(kind, kind.__name__)}, got {value!r}")
    choices = {f.name: f for f in dataclasses.fields(cls)}[key].metadata.get("choices")
    if choices and value not in choices:
        raise ValueError(f"{where}: {name} = {value!r} is not allowed; choose {' | '.join(choices)}")
    return value


def parsed_setting(section: str, key: str, text: str, where: str) -> Any:
    """A setting's value from text (an environment variable, a form field); "" unsets an optional one."""
    kind, optional = value_type(_SECTIONS[section], key)
    if text == "" and optional:
        return None
    if kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            raise ValueError(f"{where}: {dotted_setting(section, key)} must be {_TYPE_WORDS[kind]}, got {text!r}") from None
    return text


_NOT_SETTINGS = frozenset({"source", "origins"})
# Settings a file may still name by an older name: it is told the new one.
RENAMED_SETTINGS: dict[str, str] = {"trihe_unverifiable": "unverifiable (it covers HalFscore too)"}


def apply(obj: Any, values: Mapping[str, Any], where: str, section: str,
           origins: dict[str, str], origin: str) -> None:
    names = {f.name: f for f in dataclasses.fields(obj)}
    for key, value in values.items():
        if key not in names or key in _NOT_SETTINGS:
            label = f"{where} [{section}]" if section else where
            if key in RENAMED_SETTINGS:
                raise ValueError(f"{label}: the setting {key!r} is now {RENAMED_SETTINGS[key]!r}")
            raise ValueError(f"{label}: unknown setting {key!r}; known: {sorted(set(names) - _NOT_SETTINGS)}")
        current = getattr(obj, key)
        if dataclasses.is_dataclass(current):
            if not isinstance(value, dict):
                raise ValueError(f"{where}: [{key}] must be a table")
            apply(current, value, where, key, origins, origin)
        else:
            setattr(obj, key, checked_setting(section, key, value, where))
            origins[dotted_setting(section, key)] = origin


def settings_path(path: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None) -> Path:
    """The TOML file ``load_settings`` reads: ``path``, else ``$HALLU_STUDIO_CONFIG``, else ./hallu-studio.toml."""
    return _config_path(path, dict(os.environ) if env is None else env)


def overriding_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """``{"section.key": variable}`` for each setting an environment variable now overrides (a fallback
    variable, ``OPENAI_BASE_URL``, never overrides the file)."""
    env = dict(os.environ) if env is None else env
    return {f"{section}.{key}" if section else key: var for var, (section, key, _) in ENV_MAP.items()
            if env.get(var) and var not in _FALLBACK_ENV}



def _config_path(path: str | os.PathLike[str] | None, env: Mapping[str, str]) -> Path:
    return Path(path) if path else Path(env.get("HALLU_STUDIO_CONFIG", DEFAULT_CONFIG_FILE))


def _load(path: str | os.PathLike[str] | None, env: Mapping[str, str]) -> tuple[Settings, dict[str, str]]:
    """The settings, and for each one set by the file or the environment: "file" or "env:VARIABLE"."""
    settings = Settings()
    origins: dict[str, str] = {}
    candidate = _config_path(path, env)
    if path and not candidate.exists():
        raise FileNotFoundError(f"config file {candidate} does not exist")
    if candidate.exists():
        with open(candidate, "rb") as fh:
            try:
                document = tomllib.load(fh)
            except tomllib.TOMLDecodeError as exc:
                raise ValueError(f"{candidate}: not valid TOML: {exc}") from None
        apply(settings, document, str(candidate), "", origins, "file")
        settings.source = str(candidate)
    for var, (section, key, _) in ENV_MAP.items():
        if env.get(var) and not (var in _FALLBACK_ENV and dotted_setting(section, key) in origins):
            where = f"environment variable {var}"
            target = settings if not section else getattr(settings, section)
            setattr(target, key, checked_setting(section, key, parsed_setting(section, key, env[var], where), where))
            origins[dotted_setting(section, key)] = f"env:{var}"
    settings.origins = dict(origins)
    return settings, origins


def load_settings(path: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None) -> Settings:
    """Defaults, then the TOML file (if any), then environment variables; bad values are refused."""
    return _load(path, dict(os.environ) if env is None else env)[0]
