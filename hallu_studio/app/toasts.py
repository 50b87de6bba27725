"""A person's mistake is one toast; the server log stays for the server's own errors.

``gr.Error`` marks every output of the event with a red "Error" and prints a traceback in the
terminal, once per click. The views' handlers instead show an expected mistake (a missing
name, an unknown id, a bad value) as one ``gr.Warning`` and leave their outputs as they were;
an unexpected exception is logged once, with its traceback, and still shown as one toast.
"""

from __future__ import annotations

import functools
import logging
from typing import Any, Callable, TypeVar

import gradio as gr

from ..model import ValidationError
from .render.palette import esc

log = logging.getLogger(__name__)

# What a person can cause by typing or clicking: their own errors, told as they are.
MISTAKES: tuple[type[BaseException], ...] = (ValidationError, ValueError, LookupError, PermissionError)

F = TypeVar("F", bound=Callable[..., Any])


class Mistake(ValueError):
    """Raised by a handler for input it refuses; shown as a toast with its message."""


def mistake_text(exc: BaseException) -> str:
    """The message of a refused input, without KeyError's quotes, made inert for the toast.

    Gradio shows a toast's message as (sanitised) HTML, not Markdown: it is HTML-escaped, so a
    backslash escape would show as a backslash.
    """
    text = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
    return esc(text)


def toast_mistakes(n_outputs: int) -> Callable[[F], F]:
    """Decorate a handler with ``n_outputs`` outputs: a mistake becomes one warning toast and
    every output is left as it was (``gr.skip()``)."""
    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def handler(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except MISTAKES as exc:
                gr.Warning(mistake_text(exc))
            except Exception:  # noqa: BLE001 - the server's own error: logged once, told once
                log.exception("%s failed", fn.__name__)
                gr.Warning("something went wrong on the server; its log has the details")
            skipped = [gr.skip()] * n_outputs
            return skipped[0] if n_outputs == 1 else skipped
        return handler  # type: ignore[return-value]
    return decorate


def api_error(exc: BaseException) -> gr.Error:
    """The error an API caller gets for a refused input: the message, no traceback in the log."""
    return gr.Error(mistake_text(exc), print_exception=False)
