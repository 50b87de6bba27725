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
    """An OpenAI-compatible chat endpoint (OpenAI, vLLM, SGLang, Ollama, llama.cpp)."""

    base_url: str | None = None  # None: no LLM configured, offline methods are used
    model: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    timeout_s: float = 60.0
    max_retries: int = 4
    concurrency: int = 8
    temperature: float = 0.0

    @property
    def configured(self) -> bool:
        return bool(self.base_url and self.model)

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
    halfscore_matcher: str = "embedding"  # embedding | llm
    batch_size: int = 64


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
        ``halfscore_matcher`` is left out too: HalFscore's own config names its matcher, so its
        scores are already apart, and the other metrics' keys stay what they were.
        """
        shaping = {k: v for k, v in dataclasses.asdict(self.scoring).items()
                   if k not in ("batch_size", "halfscore_matcher")}
        return content_key(shaping, self.llm.model, self.llm.base_url, *parts)[:16]


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


def settings_path(path: str | os.PathLike[str] | None = None, env: dict[str, str] | None = None) -> Path:
    """The TOML file ``load_settings`` reads: ``path``, else ``$HALLU_STUDIO_CONFIG``, else ./hallu-studio.toml."""
    env = dict(os.environ) if env is None else env
    return Path(path) if path else Path(env.get("HALLU_STUDIO_CONFIG", "hallu-studio.toml"))


def overriding_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """``{"section.key": variable}`` for each setting an environment variable now overrides."""
    env = dict(os.environ) if env is None else env
    return {f"{section}.{key}" if section else key: var for var, (section, key, _) in _ENV_MAP.items()
            if env.get(var)}


# What ``write_settings`` accepts: the choices a person edits, with their checks.
_CHOICES = {("scoring", "extractor"): ("parser", "llm"), ("scoring", "reviser"): ("rule", "llm"),
            ("scoring", "halfscore_matcher"): ("embedding", "llm")}
_UNIT_INTERVAL = ("trihe_reference_threshold", "trihe_support_threshold", "nli_threshold",
                  "halfscore_match_threshold")


def settings_problems(settings: Settings) -> list[str]:
    """What is wrong with edited settings, one line each (empty: they can be saved).

    The Tri-HE judge is checked by building it (its kinds live with the judges).

    >>> s = Settings(); s.scoring.nli_threshold = 1.5; s.llm.base_url = "localhost:8000"
    >>> settings_problems(s)
    ['scoring.nli_threshold must be between 0 and 1, got 1.5', "llm.base_url must start with http:// or https://, got 'localhost:8000'"]
    """
    problems = []
    for (section, key), allowed in _CHOICES.items():
        value = getattr(getattr(settings, section), key)
        if value not in allowed:
            problems.append(f"{section}.{key} must be one of {', '.join(allowed)}, got {value!r}")
    for key in _UNIT_INTERVAL:
        value = getattr(settings.scoring, key)
        if not isinstance(value, (int, float)) or not 0 <= value <= 1:
            problems.append(f"scoring.{key} must be between 0 and 1, got {value!r}")
    if not isinstance(settings.scoring.trihe_top_k, int) or settings.scoring.trihe_top_k < 1:
        problems.append(f"scoring.trihe_top_k must be a whole number of at least 1, got {settings.scoring.trihe_top_k!r}")
    url = settings.llm.base_url
    if url and not url.startswith(("http://", "https://")):
        problems.append(f"llm.base_url must start with http:// or https://, got {url!r}")
    needs_llm = [f"scoring.{k}" for k in ("extractor", "reviser", "trihe_judge", "halfscore_matcher")
                 if getattr(settings.scoring, k) == "llm"]
    if needs_llm and not settings.llm.configured:
        problems.append(f"{', '.join(needs_llm)} = llm needs the LLM endpoint and model")
    return problems


def write_settings(path: str | os.PathLike[str], changes: dict[str, dict[str, Any]]) -> Path:
    """Set ``changes`` (``{"scoring": {"trihe_judge": "nli"}, ...}``) in the TOML file, keeping the rest.

    Comments, other tables and other keys stay as they were; a value of None removes the key
    (the default applies again). The file is created when it does not exist.
    """
    import tomlkit

    target = Path(path)
    document = tomlkit.parse(target.read_text(encoding="utf-8")) if target.exists() else tomlkit.document()
    known = {f.name: f for f in dataclasses.fields(Settings)}
    for section, values in changes.items():
        if section not in known or section in ("db", "source"):
            raise ValueError(f"unknown settings table [{section}]")
        names = {f.name for f in dataclasses.fields(getattr(Settings(), section))}
        table = document.get(section)
        if table is None:
            table = tomlkit.table()
            document[section] = table
        for key, value in values.items():
            if key not in names:
                raise ValueError(f"[{section}]: unknown setting {key!r}; known: {sorted(names)}")
            if value is None:
                table.pop(key, None)
            else:
                table[key] = value
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(tomlkit.dumps(document), encoding="utf-8")
    tmp.replace(target)  # a crash mid-write never leaves half a file
    return target


def load_settings(path: str | os.PathLike[str] | None = None, env: dict[str, str] | None = None) -> Settings:
    """Defaults, then the TOML file (if any), then environment variables."""
    env = dict(os.environ) if env is None else env
    settings = Settings()
    candidate = settings_path(path, env)
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
