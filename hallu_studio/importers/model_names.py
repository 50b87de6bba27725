"""The hub id of the model a toolkit's file names, whatever form the name takes there.

Toolkits write the model as they were given it: a hub id (``liuhaotian/llava-v1.5-7b``), a Hugging Face cache
snapshot path (``/opt/hf-cache/hub/models--Qwen--Qwen2.5-VL-3B-Instruct/snapshots/66285546…``), a model-args
string (``pretrained=…,attn_implementation=sdpa``), lmms-eval's sanitized folder name
(``Qwen__Qwen2.5-VL-3B-Instruct``) or a local checkpoint folder. :func:`hub_model_id` reads the hub id out of each, and never answers a commit hash:
a leaderboard row named ``66285546d2b8…`` names nothing a reader can look up.

>>> hub_model_id("/opt/hf/hub/models--Qwen--Qwen2.5-VL-3B-Instruct/snapshots/66285546d2b821cf421d4f5eb2576359d3770cd3")
'Qwen/Qwen2.5-VL-3B-Instruct'
>>> hub_model_id("pretrained=liuhaotian/llava-v1.5-7b,device_map=auto")
'liuhaotian/llava-v1.5-7b'
>>> hub_model_id("Qwen__Qwen2.5-VL-3B-Instruct"), hub_model_id("snapshots__66285546d2b821cf421d4f5eb2576359d3770cd3")
('Qwen/Qwen2.5-VL-3B-Instruct', None)
>>> hub_model_id("/home/me/checkpoints/cca-llava-1.5-7b"), hub_model_id("66285546d2b821cf"), hub_model_id("")
(None, None, None)
>>> recorded_model_name("/home/me/checkpoints/cca-llava-1.5-7b", fallback="file.jsonl")
'cca-llava-1.5-7b'
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Iterable

# A hub repository id: ``org/name``, each part of the characters the hub allows.
_HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*")
# Hugging Face's cache folder for a model: ``models--<org>--<name>`` (the id's "/" written "--").
_CACHE_DIR = re.compile(r"(?:^|/)models--([A-Za-z0-9][A-Za-z0-9._-]*?)--([A-Za-z0-9][A-Za-z0-9._-]*)(?:/|$)")
_HASH = re.compile(r"[0-9a-f]{7,64}")
# Folder names that say where a checkpoint sits, not what it is.
_NOT_NAMES = frozenset({"snapshots", "checkpoints", "checkpoint", "models", "hub", "model", "weights", "ckpt"})


def _is_hash(text: str) -> bool:
    return bool(_HASH.fullmatch(text.lower()))


def pretrained_arg(model_args: str) -> str | None:
    """The ``pretrained=`` value of a model-args string (``pretrained=org/name,device_map=auto``), else None."""
    m = re.search(r"(?:^|,)\s*pretrained\s*=\s*([^,]+)", model_args)
    return m.group(1).strip().strip("'\"") if m else None


def _pretrained(text: str) -> str:
    return pretrained_arg(text) or text


def _from_config(folder: Path) -> str | None:
    """The hub id a local checkpoint's ``config.json`` says it was made from (``_name_or_path``)."""
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    name = config.get("_name_or_path") if isinstance(config, dict) else None
    return name if isinstance(name, str) and _HUB_ID.fullmatch(name) and not _is_hash(name.split("/")[1]) else None


def hub_model_id(text: str | None) -> str | None:
    """The hub id ``text`` names (see the module docstring), or None when it names none."""
    text = _pretrained((text or "").strip().strip("'\""))
    if not text:
        return None
    m = _CACHE_DIR.search(text.replace("\\", "/"))
    if m:
        return f"{m.group(1)}/{m.group(2)}"
    if _HUB_ID.fullmatch(text):
        org, name = text.split("/")
        return None if _is_hash(name) or org.lower() in _NOT_NAMES else text
    if "/" not in text and "\\" not in text and text.count("__") == 1:  # lmms-eval's model_name_sanitized
        return hub_model_id(text.replace("__", "/"))
    folder = Path(text)
    if folder.is_dir():
        return _from_config(folder)
    return None


def local_model_name(text: str | None) -> str | None:
    """A local checkpoint's own folder name (``…/checkpoints/cca-llava-1.5-7b`` -> ``cca-llava-1.5-7b``), skipping
    hashes and folders like ``snapshots``; None when no part of the path is a name."""
    path = _pretrained((text or "").strip().strip("'\"")).replace("\\", "/").rstrip("/")
    for part in reversed(path.split("/")):
        if part and not _is_hash(part.split("__")[-1]) and part.lower() not in _NOT_NAMES and part not in (".", ".."):
            return part
    return None


def recorded_model_name(*candidates: str | None, fallback: str) -> str:
    """The model's name for a recorded run: the first hub id among ``candidates`` (in the order given), else the
    first local checkpoint name among them, else ``fallback`` (the file's name)."""
    texts: Iterable[str] = [c for c in candidates if c and c.strip()]
    for text in texts:
        found = hub_model_id(text)
        if found:
            return found
    for text in texts:
        found = local_model_name(text)
        if found:
            return found
    return fallback
