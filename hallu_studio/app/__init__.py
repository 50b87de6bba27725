"""The Gradio app: ``build_app(ctx)`` lays out the views; ``main()`` is ``python app.py``.

Layers: ``render/`` (pure HTML / figure functions), ``inspection`` and ``overview_data``
(store → panels / numbers), ``actions`` (who is acting → one ``annotation`` call),
``tabs/`` (Gradio layout and wiring only).
"""

from .build import build_app, launch_kwargs
from .context import AppContext

__all__ = ["AppContext", "build_app", "launch_kwargs"]
