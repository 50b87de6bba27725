"""Annotator sign-in: a users file or ``$HALLU_STUDIO_USERS``.

The file is JSON, either ``{"name": "password", ...}`` or ``[{"username": ..., "password": ...}]``;
the environment variable holds ``name:password`` pairs separated by commas.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

USERS_ENV = "HALLU_STUDIO_USERS"


def parse_users_env(value: str) -> list[tuple[str, str]]:
    """``"ann:pw1,bob:pw2"`` → ``[("ann", "pw1"), ("bob", "pw2")]``.

    >>> parse_users_env("ann:pw1, bob:pw2")
    [('ann', 'pw1'), ('bob', 'pw2')]
    """
    users = []
    for n, item in enumerate(x.strip() for x in value.split(",")):
        if not item:
            continue
        name, sep, password = item.partition(":")
        if not sep or not name.strip() or not password:
            raise ValueError(f"${USERS_ENV} entry {n + 1} must be name:password, got {item.split(':')[0]!r}:…")
        users.append((name.strip(), password))
    return users


def load_users_file(path: str | os.PathLike[str]) -> list[tuple[str, str]]:
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"users file {p} does not exist")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"users file {p} is not valid JSON: {exc}") from exc
    if isinstance(data, dict):
        pairs = [(str(k), str(v)) for k, v in data.items()]
    elif isinstance(data, list):
        pairs = []
        for i, entry in enumerate(data):
            if not isinstance(entry, dict) or not entry.get("username") or not entry.get("password"):
                raise ValueError(f"users file {p}: entry {i} needs 'username' and 'password'")
            pairs.append((str(entry["username"]), str(entry["password"])))
    else:
        raise ValueError(f"users file {p} must hold an object or a list")
    if not pairs:
        raise ValueError(f"users file {p} names no users")
    return pairs


def resolve_users(path: str | None, env: dict[str, str] | None = None) -> list[tuple[str, str]] | None:
    """The users to sign in: from ``path`` if given, else ``$HALLU_STUDIO_USERS``, else None (no auth)."""
    env = dict(os.environ) if env is None else env
    if path:
        return load_users_file(path)
    if env.get(USERS_ENV):
        return parse_users_env(env[USERS_ENV])
    return None
