"""The Gradio app: ``build_app(ctx)`` lays out the views; ``main()`` is ``python app.py``.

Layers: ``render/`` (pure HTML / figure functions), ``inspection`` (store → panels; the numbers and their
ranking are ``studies.ranking`` and ``studies.in_force``'s), ``actions`` (who is acting → one ``annotation``
call), ``tabs/`` (Gradio layout and wiring only).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .build import build_app, launch_kwargs
    from .context import AppContext

__all__ = ["AppContext", "build_app", "launch_kwargs"]


def __getattr__(name: str) -> Any:
    # Gradio loads on first use, not with the package: ``python app.py`` checks its port
    # (and answers ``--help``) in a fraction of the time Gradio takes to import.
    if name in ("build_app", "launch_kwargs"):
        from . import build
        return getattr(build, name)
    if name == "AppContext":
        from .context import AppContext
        return AppContext
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
