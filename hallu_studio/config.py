"""Explicit configuration: one ``Settings`` object, read from a TOML file and the environment.

Precedence (lowest to highest): the defaults below, ``hallu-studio.toml`` (or the
file named by ``HALLU_STUDIO_CONFIG``), environment variables. Every setting that
changes a score is part of that score's ``config_key`` so that scores computed
under different settings never mix.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .model import content_key

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


def apply_offline_env_defaults() -> None:
    for key, value in OFFLINE_ENV_DEFAULTS.items():
        os.environ.setdefault(key, value)


@dataclass
class LLMSettings:
    """An OpenAI-compatible chat endpoint (OpenAI, vLLM, SGLang, Ollama, llama.cpp), or several replicas of one.

    ``base_url`` is one URL or a list (TOML list; comma-separated in the environment): calls are
    spread over the replicas (see ``hallu_studio.llm.dispatch``). A try's timeout is
    ``timeout_s + timeout_per_token_s × (prompt tokens + expected_output_tokens)``, doubled after
    a timeout; ``concurrency`` is the most calls in flight, lowered while the server is saturated.
    """

    base_url: str | list[str] | None = None  # None: no LLM configured, offline methods are used
    model: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    timeout_s: float = 60.0
    timeout_per_token_s: float = 0.02
    expected_output_tokens: int = 256
    max_retries: int = 4
    concurrency: int = 8
    temperature: float = 0.0

    @property
    def base_urls(self) -> list[str]:
        from .llm.dispatch import parse_base_urls

        return parse_base_urls(self.base_url)

    @property
    def configured(self) -> bool:
        return bool(self.base_urls and self.model)

    def api_key(self) -> str:
        # Local servers accept any key; the client library insists on one.
        return os.environ.get(self.api_key_env) or "EMPTY"


@dataclass
class ScoringSettings:
    embedding_model: str = "all-MiniLM-L6-v2"
    nli_model: str | None = None  # a Hugging Face NLI cross-encoder; None: no NLI judge
    extractor: str = "parser"  # parser | llm
    reviser: str = "rule"  # rule | llm
    trihe_judge: str = "embedding"  # embedding | nli | llm
    # Tri-HE's released embedding-similarity check (see docs/metrics.md).
    trihe_reference_threshold: float = 0.5
    trihe_support_threshold: float = 0.6
    trihe_top_k: int = 3
    nli_threshold: float = 0.6
    halfscore_match_threshold: float = 0.7
    batch_size: int = 64

    @property
    def embedding_identity(self) -> str:
        """The embedding model as scores name it: a served one without its URLs (see ``embedding.py``)."""
        from .embedding import embedding_identity

        return embedding_identity(self.embedding_model)


@dataclass
class DecodingSettings:
    """Reefknot's Detect-then-Calibrate defaults (Algorithm 1)."""

    dtc_alpha: float = 0.1
    dtc_lambda: int = 2
    dtc_gamma: float = 0.9


@dataclass
class Settings:
    db: str | None = None
    llm: LLMSettings = field(default_factory=LLMSettings)
    scoring: ScoringSettings = field(default_factory=ScoringSettings)
    decoding: DecodingSettings = field(default_factory=DecodingSettings)
    source: str | None = None  # the TOML file these settings were read from, if any

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def scoring_key(self, *parts: Any) -> str:
        """A short content key of the settings that shape a score, plus ``parts``.

        ``batch_size`` only says how the work is chunked into transactions, never a number:
        it is left out, so a resumed run with another batch size continues the same scores.
        The LLM counts by its model name, not by where it is served: one replica or eight of the
        same model give the same scores (and share cached answers). The None stands where the URL
        once was, so that the keys of scores made without an LLM stay what they were.
        """
        shaping = {k: v for k, v in dataclasses.asdict(self.scoring).items() if k != "batch_size"}
        shaping["embedding_model"] = self.scoring.embedding_identity  # likewise for a served embedding model
        return content_key(shaping, self.llm.model, None, *parts)[:16]


_ENV_MAP: dict[str, tuple[str, str, type]] = {
    "HALLU_STUDIO_DB": ("", "db", str),
    "HALLU_STUDIO_LLM_BASE_URL": ("llm", "base_url", str),
    "OPENAI_BASE_URL": ("llm", "base_url", str),
    "HALLU_STUDIO_LLM_MODEL": ("llm", "model", str),
    "HALLU_STUDIO_EMBEDDING_MODEL": ("scoring", "embedding_model", str),
    "HALLU_STUDIO_NLI_MODEL": ("scoring", "nli_model", str),
    "HALLU_STUDIO_EXTRACTOR": ("scoring", "extractor", str),
    "HALLU_STUDIO_REVISER": ("scoring", "reviser", str),
    "HALLU_STUDIO_TRIHE_JUDGE": ("scoring", "trihe_judge", str),
}


def _apply(obj: Any, values: dict[str, Any], where: str) -> None:
    names = {f.name: f for f in dataclasses.fields(obj)}
    for key, value in values.items():
        if key not in names:
            raise ValueError(f"{where}: unknown setting {key!r}; known: {sorted(names)}")
        current = getattr(obj, key)
        if dataclasses.is_dataclass(current):
            if not isinstance(value, dict):
                raise ValueError(f"{where}: [{key}] must be a table")
            _apply(current, value, f"{where} [{key}]")
        else:
            setattr(obj, key, value)


def load_settings(path: str | os.PathLike[str] | None = None, env: dict[str, str] | None = None) -> Settings:
    """Defaults, then the TOML file (if any), then environment variables."""
    env = dict(os.environ) if env is None else env
    settings = Settings()
    candidate = Path(path) if path else Path(env.get("HALLU_STUDIO_CONFIG", "hallu-studio.toml"))
    if path and not candidate.exists():
        raise FileNotFoundError(f"config file {candidate} does not exist")
    if candidate.exists():
        with open(candidate, "rb") as fh:
            _apply(settings, tomllib.load(fh), str(candidate))
        settings.source = str(candidate)
    for var, (section, key, kind) in _ENV_MAP.items():
        if env.get(var):
            target = settings if not section else getattr(settings, section)
            setattr(target, key, kind(env[var]))
    return settings
