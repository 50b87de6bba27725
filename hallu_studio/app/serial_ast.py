"""One AST at a time in the app's process: a lock around every ``compile`` that builds or reads an AST.

CPython 3.11 keeps the depth counter it checks while turning a parsed module into ``ast`` objects (and back) in
one place per interpreter, not per thread. When two threads parse Python source at once, each can overwrite the
other's count, and one of them fails with ``SystemError: AST constructor recursion depth mismatch``. The app
imports in several threads when it starts:
- the main thread imports Gradio;
- the preload thread imports torch and spaCy;
- the probe runs import inflect, whose typeguard parses inflect's source;
- the views import matplotlib on first use.

Each of these imports parses hundreds of ASTs. In CI, one collision failed a probe run's chunk of 64 responses
while torch loaded beside it.

``ast.parse`` and the import machinery look ``compile`` up in ``builtins`` when they call it, so one wrapper there
covers them. A compile to bytecode (an import from source, ``exec``) builds no ``ast`` objects and passes
through unlocked.

>>> install(); import ast; ast.parse("x = 1").body[0].targets[0].id
'x'
"""

from __future__ import annotations

import ast
import builtins
import threading
from typing import Any

_LOCK = threading.RLock()  # re-entrant: a collector's finalizer may itself parse while one parse holds it
_COMPILE = builtins.compile


def _serial_compile(source: Any, filename: Any, mode: str, flags: int = 0, *args: Any, **kwargs: Any) -> Any:
    if flags & ast.PyCF_ONLY_AST or isinstance(source, ast.AST):
        with _LOCK:
            return _COMPILE(source, filename, mode, flags, *args, **kwargs)
    return _COMPILE(source, filename, mode, flags, *args, **kwargs)


def install() -> None:
    """Serialise AST work in this process (idempotent). Call it before starting threads that import."""
    if not installed():
        builtins.compile = _serial_compile


def installed() -> bool:
    return builtins.compile is _serial_compile
