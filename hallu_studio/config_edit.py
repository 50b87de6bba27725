"""The Settings view's side of the configuration: every setting described (value, default, choices, origin),
edited settings checked as a whole, and changes written back to the TOML file.

Loading and the declarations live in ``config``; this module reads them and adds nothing a load needs.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from .config import (ENV_MAP, Settings, apply, checked_setting, dotted_setting, parsed_setting, setting_fields, value_type,
                     load_settings)


def settings_problems(settings: Settings) -> list[str]:
    """What is wrong with edited settings as a whole, one line each (empty: they can be saved).

    Each value's own choices and type are checked where it is set (``write_settings``); this adds the
    checks across values and of ranges.

    >>> s = Settings(); s.scoring.nli_threshold = 1.5; s.llm.base_url = "localhost:8000"
    >>> settings_problems(s)
    ['scoring.nli_threshold must be between 0 and 1, got 1.5', "llm.base_url must start with http:// or https://, got 'localhost:8000'"]
    """
    problems = []
    for section in ("llm", "scoring", "decoding"):
        for f in dataclasses.fields(getattr(settings, section)):
            allowed = f.metadata.get("choices")
            value = getattr(getattr(settings, section), f.name)
            if allowed and value not in allowed:
                problems.append(f"{section}.{f.name} must be one of {', '.join(allowed)}, got {value!r}")
    for key in ("trihe_reference_threshold", "trihe_support_threshold", "nli_threshold", "halfscore_match_threshold",
                "graph_grounding_threshold", "unverifiable_weight"):
        value = getattr(settings.scoring, key)
        if not isinstance(value, (int, float)) or not 0 <= value <= 1:
            problems.append(f"scoring.{key} must be between 0 and 1, got {value!r}")
    if not isinstance(settings.scoring.trihe_top_k, int) or settings.scoring.trihe_top_k < 1:
        problems.append(f"scoring.trihe_top_k must be a whole number of at least 1, got {settings.scoring.trihe_top_k!r}")
    for url in settings.llm.base_urls:
        if not url.startswith(("http://", "https://")):
            problems.append(f"llm.base_url must start with http:// or https://, got {url!r}")
    needs_llm = [f"scoring.{k}" for k in ("extractor", "reviser", "trihe_judge", "halfscore_matcher")
                 if getattr(settings.scoring, k) == "llm"]
    if needs_llm and not settings.llm.configured:
        problems.append(f"{', '.join(needs_llm)} = llm needs the LLM endpoint and model")
    if settings.scoring.trihe_judge == "vlm" and not settings.scoring.vlm_judge_model:
        problems.append("scoring.trihe_judge = vlm needs scoring.vlm_judge_model (transformers:<id or path> or "
                        "openai:<model>@<url>)")
    if not isinstance(settings.scoring.vlm_judge_concurrency, int) or settings.scoring.vlm_judge_concurrency < 1:
        problems.append("scoring.vlm_judge_concurrency must be a whole number of at least 1")
    return problems


@dataclass(frozen=True)
class SettingInfo:
    """One setting as the Settings view shows it."""

    name: str  # dotted: "scoring.trihe_judge"; "db" at the top level
    value: Any
    default: Any
    kind: str  # "string", "integer", "number"
    optional: bool  # may be unset (written by leaving the key out of the file)
    choices: tuple[str, ...] | None  # the allowed values of a choice; None: free
    source: str  # "default", "file" or "env"
    origin: str  # the file's path, the environment variable's name, or "default"
    env_vars: tuple[str, ...]  # variables that set it, the first one set winning (a fallback one after the file)
    help: str

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def describe_settings(path: str | os.PathLike[str] | None = None,
                      env: Mapping[str, str] | None = None) -> list[SettingInfo]:
    """Every setting with its current value, default, allowed values and where the value came from.

    Reads ``path`` (else ``$HALLU_STUDIO_CONFIG``, else ./hallu-studio.toml) and ``env``
    (default ``os.environ``) exactly as ``load_settings`` does.
    """
    return setting_infos(load_settings(path, env))


def setting_infos(settings: Settings) -> list[SettingInfo]:
    """Every setting of ``settings`` (as loaded: its ``origins`` say where each value came from) with its value,
    default, kind, allowed values, variables and help, in declaration order.

    >>> info = {i.name: i for i in setting_infos(load_settings(env={"HALLU_STUDIO_CONFIG": "/none.toml",
    ...                                                             "HALLU_STUDIO_POPE_READING": "released"}))}
    >>> info["scoring.pope_reading"].value, info["scoring.pope_reading"].origin, info["scoring.pope_reading"].choices
    ('released', 'HALLU_STUDIO_POPE_READING', ('studio', 'released'))
    """
    by_setting: dict[str, list[str]] = {}
    for var, (section, key, _) in ENV_MAP.items():
        by_setting.setdefault(dotted_setting(section, key), []).append(var)
    out: list[SettingInfo] = []
    for name, (section, cls, f) in setting_fields().items():
        kind, optional = value_type(cls, f.name)
        origin = settings.origins.get(name, "default")
        source = origin.split(":", 1)[0]
        out.append(SettingInfo(
            name=name, value=getattr(getattr(settings, section) if section else settings, f.name),
            default=f.default, kind={str: "string", int: "integer", float: "number"}[kind], optional=optional,
            choices=f.metadata["choices"], source=source,
            origin=(settings.source or "") if source == "file" else origin.split(":", 1)[-1],
            env_vars=tuple(by_setting.get(name, ())), help=f.metadata["help"]))
    return out


def write_settings(path: str | os.PathLike[str], changes: Mapping[str, Any],
                   env: Mapping[str, str] | None = None) -> Settings:
    """Set settings in the TOML file ``path`` and return the settings now in force (file, then ``env``).

    ``changes`` maps dotted names ("scoring.trihe_judge", "db") to values; a string is
    parsed as the setting's type (what a form field gives), and None or "" unsets an
    optional setting (its key leaves the file). Every change is checked before anything is
    written; the rest of the file, comments included, is kept. The file is replaced
    atomically, so a reader never sees half of it.
    """
    import tomlkit

    target = Path(path)
    document = tomlkit.parse(target.read_text(encoding="utf-8")) if target.exists() else tomlkit.document()
    where = str(target)
    known = setting_fields()
    for name, value in changes.items():
        if name not in known:
            raise ValueError(f"{where}: unknown setting {name!r}; known: {', '.join(known)}")
        section, _, key = name.rpartition(".")
        if isinstance(value, str):
            value = parsed_setting(section, key, value, where)
        value = checked_setting(section, key, value, where)
        table: Any = document
        if section:
            if section not in document:
                document[section] = tomlkit.table()
            table = document[section]
        if value is None:
            table.pop(key, None)
        else:
            table[key] = value
    text = tomlkit.dumps(document)
    _load_text_check(text, where)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return load_settings(target, env)


def _load_text_check(text: str, where: str) -> None:
    """Refuse to write a file that would not load (a bad value already in it, say)."""
    apply(Settings(), tomllib.loads(text), where, "", {}, "file")
