"""Shared colours and small HTML helpers for the renderers."""

from __future__ import annotations

import hashlib
import html
import re
from typing import Any

# One verdict vocabulary for every view: what the judges say about a concept.
SUPPORTED, HALLUCINATED, UNCERTAIN = "supported", "hallucinated", "uncertain"
VERDICT_COLOURS = {SUPPORTED: "#2e9d5b", HALLUCINATED: "#d64545", UNCERTAIN: "#e0a21b"}
VERDICT_BACKGROUNDS = {SUPPORTED: "#d9f2e3", HALLUCINATED: "#fbdada", UNCERTAIN: "#fcefcc"}

# Tri-HE's verdict labels mapped onto the three display verdicts.
TRIHE_TO_VERDICT = {
    "supported": SUPPORTED,
    "object": HALLUCINATED,
    "relation": HALLUCINATED,
    "prediction_error": HALLUCINATED,
    "unparseable": UNCERTAIN,
    "unverifiable": UNCERTAIN,
    "inference": UNCERTAIN,
}


def claim_label(verdict: str, kind: str | None = None) -> str:
    """A judge's verdict on one claim, named for what the claim is about: Tri-HE files an attribute conflict under
    "relation" and a wrong count under "object" (its two kinds), which a reader would misread.

    >>> claim_label("relation", "attribute"), claim_label("object", "count"), claim_label("relation", "relation")
    ('attribute', 'count', 'relation')
    """
    if kind == "attribute" and verdict == "relation":
        return "attribute"
    if kind == "count" and verdict == "object":
        return "count"
    return verdict


def esc(value: Any) -> str:
    """``html.escape`` of ``str(value)``; ``None`` becomes an empty string.

    For HTML: ``gr.HTML`` and the ``gr.Error`` / ``gr.Info`` / ``gr.Warning`` messages, which Gradio 6
    renders as HTML (not Markdown). Not enough for ``gr.Markdown``: use ``md`` there.
    """
    return "" if value is None else html.escape(str(value), quote=True)


# Markdown's backslash-escapable punctuation (CommonMark §2.4), less the characters html.escape turns into
# entities (& < > " '), which Markdown shows as the characters themselves.
_MARKDOWN_SPECIALS = re.compile(r"([\\`*_{}\[\]()#+\-.!|~=:;,?/^$%@])")


def md(value: Any) -> str:
    """Untrusted text made inert for ``gr.Markdown``: Markdown and HTML alike.

    (Component labels and dropdown choices are plain text in Gradio 6: they need neither.)

    Every Markdown punctuation mark is backslash-escaped (no link, image, emphasis or
    heading can form), then HTML is escaped (no tag can form); newlines become spaces.

    >>> print(md("![x](http://evil.example/a.png) <img src=x>"))
    \\!\\[x\\]\\(http\\:\\/\\/evil\\.example\\/a\\.png\\) &lt;img src\\=x&gt;
    """
    text = "" if value is None else " ".join(str(value).split())
    return html.escape(_MARKDOWN_SPECIALS.sub(r"\\\1", text), quote=True)


def badge(verdict: str, text: str | None = None) -> str:
    """A coloured pill for a verdict (unknown verdicts are shown as uncertain)."""
    colour = VERDICT_COLOURS.get(verdict, VERDICT_COLOURS[UNCERTAIN])
    return (f'<span class="hs-badge" style="background:{colour};color:#fff;border-radius:8px;'
            f'padding:0 6px;font-size:0.85em">{esc(text if text is not None else verdict)}</span>')


def fmt_number(value: Any, digits: int = 3) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        return f"{value:.{digits}g}" if isinstance(value, float) else str(value)
    return esc(value)


def empty_note(text: str) -> str:
    return f'<div class="hs-empty" style="color:#777;font-style:italic">{esc(text)}</div>'


def model_label(model: Any, synthetic: Any) -> str:
    """The model's name, marked "[synthetic]" once when the run is a probe (plain text, not escaped).

    >>> model_label("probe rate=0.1 [synthetic]", True), model_label("probe-a", True), model_label("llava", False)
    ('probe rate=0.1 [synthetic]', 'probe-a [synthetic]', 'llava')
    """
    name = str(model)
    return f"{name} [synthetic]" if synthetic and "[synthetic]" not in name else name


# Model colours: one per model name, the same in every plot and view whatever else is in the store
# (a hash of the name, never its position in a list): 16 well-separated hues, so two models share
# one about once in 16 pairs; their names (and the full spec on hover) still tell them apart.
MODEL_COLOURS: tuple[str, ...] = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
                                  "#ff9da7", "#9c755f", "#2f4b7c", "#a05195", "#d45087", "#665191", "#008080",
                                  "#8c6d31", "#7f7f7f")
_SYNTHETIC_MARK = " [synthetic]"


_PROBE = re.compile(r"^probe rate=(?P<rate>\S+)(?: mix=(?P<mix>\S+))?(?: seed=(?P<seed>\S+))?(?P<rest>.*)$")


# Probe models are coloured by their injected hallucination rate on viridis (light: few, dark: many),
# so that the demo's probes never share a colour and their order reads off the colour.
_VIRIDIS = ("#440154", "#482878", "#3e4989", "#31688e", "#26828e", "#1f9e89", "#35b779", "#6ece58", "#b5de2b")


def _ramp(position: float) -> str:
    """Viridis at ``position`` in [0, 1], interpolated between the anchors above."""
    x = min(1.0, max(0.0, position)) * (len(_VIRIDIS) - 1)
    i = min(int(x), len(_VIRIDIS) - 2)
    a, b = (tuple(int(c[k:k + 2], 16) for k in (1, 3, 5)) for c in _VIRIDIS[i:i + 2])
    return "#" + "".join(f"{round(u + (v - u) * (x - i)):02x}" for u, v in zip(a, b))


def model_colour(model: Any) -> str:
    """The model's colour (hex), a function of its name alone; the "[synthetic]" mark does not count.

    >>> model_colour("llava") == model_colour("llava [synthetic]"), model_colour("llava") in MODEL_COLOURS
    (True, True)
    >>> [model_colour(f"probe rate={r} seed=0") for r in (0, 0.1, 0.5)]
    ['#b5de2b', '#2ab07f', '#3a538b']
    """
    name = str(model).replace(_SYNTHETIC_MARK, "").strip()
    probe = _PROBE.match(name)
    if probe:
        try:
            return _ramp(1.0 - min(1.0, float(probe["rate"])) ** 0.5 * 1.1)
        except ValueError:
            pass  # an unreadable rate: coloured like any other name
    digest = hashlib.blake2b(name.encode("utf-8"), digest_size=8).digest()
    return MODEL_COLOURS[int.from_bytes(digest, "big") % len(MODEL_COLOURS)]


def display_name(model: Any, width: int = 22) -> str:
    """A short name for tables and legends (the full spec goes in a tooltip); plain text, not escaped.

    Probe specs keep their rate (and a seed or extra option when not the default); backend
    prefixes, organisations, endpoints and a trailing "-hf" go.

    >>> display_name("probe rate=0.3 mix=object+attribute+relation+count seed=0 [synthetic]")
    'probe 0.3'
    >>> display_name("transformers:llava-hf/llava-1.5-7b-hf"), display_name("openai:Qwen/Qwen2-VL-7B@http://h:8000/v1")
    ('llava-1.5-7b', 'Qwen2-VL-7B')
    """
    name = str(model).replace(_SYNTHETIC_MARK, "").strip()
    probe = _PROBE.match(name)
    if probe:
        extra = [f"seed {probe['seed']}"] if probe["seed"] not in (None, "0") else []
        extra += [probe["rest"].strip()] if probe["rest"].strip() else []
        name = " ".join([f"probe {probe['rate']}", *extra])
    else:
        name = name.split("@", 1)[0]
        backend, sep, rest = name.partition(":")
        if sep and re.fullmatch(r"[a-z][a-z0-9_-]*", backend) and rest:
            name = rest
        name = re.sub(r"-hf$", "", name.rstrip("/").rsplit("/", 1)[-1]) or name
    return name if len(name) <= width else name[: width - 1] + "…"


def short_model_label(model: Any, synthetic: Any, width: int = 22) -> str:
    """``display_name``, marked "(synthetic)" for probe runs: legends and table cells.

    >>> short_model_label("probe rate=0.3 mix=object+attribute+relation+count seed=0 [synthetic]", True)
    'probe 0.3 (synthetic)'
    """
    marked = synthetic or _SYNTHETIC_MARK in str(model)
    return display_name(model, width) + (" (synthetic)" if marked else "")
