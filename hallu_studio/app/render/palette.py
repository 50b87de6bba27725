"""Verdict colours and small HTML helpers for the renderers (numbers, model names and colours:
``hallu_studio.presentation``)."""

from __future__ import annotations

import html
import re
from typing import Any

from ...metrics.evidence import CORRECT, NOT_SETTLED, OMITTED, WRONG
from ...presentation import number

# One verdict vocabulary for every view: what the judges say about a concept (``metrics.evidence``'s words; the
# graphs' and text's "uncertain" is its "not settled"), and one colour per verdict: text, graphs, tables, badges.
SUPPORTED, HALLUCINATED, UNCERTAIN = "supported", "hallucinated", "uncertain"
_RED, _GREEN, _AMBER, _GREY = ("#d64545", "#fbdada"), ("#2e9d5b", "#d9f2e3"), ("#e0a21b", "#fcefcc"), ("#7b6fa8",
                                                                                                      "#e9e5f5")
_TONES = {SUPPORTED: _GREEN, CORRECT: _GREEN, HALLUCINATED: _RED, WRONG: _RED, UNCERTAIN: _AMBER, NOT_SETTLED: _AMBER,
          OMITTED: _GREY}
VERDICT_COLOURS = {verdict: tone[0] for verdict, tone in _TONES.items()}
VERDICT_BACKGROUNDS = {verdict: tone[1] for verdict, tone in _TONES.items()}
NEUTRAL_COLOUR = "#7a9cc6"  # said, but no judge gave a verdict
# What each colour says, in the words every legend uses.
LEGEND = ((SUPPORTED, "supported / correct"), (HALLUCINATED, "hallucinated / wrong"),
          (NOT_SETTLED, "not settled (the reference cannot tell)"), (OMITTED, "omitted (in the reference only)"))


def legend_html() -> str:
    """The one legend of verdict colours, as badges."""
    return ('<span class="hs-legend">' + " ".join(badge(v, words) for v, words in LEGEND)
            + f' <span class="hs-badge" style="background:{NEUTRAL_COLOUR};color:#fff;border-radius:8px;'
              'padding:0 6px;font-size:0.85em">not judged</span></span>')

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


def claim_words(verdict: str, kind: str | None = None) -> str:
    """A judge's verdict on one claim in words: "hallucinated (attribute)", "supported", "not settled (unverifiable)".

    >>> claim_words("relation", "attribute"), claim_words("supported"), claim_words("unverifiable", "attribute")
    ('hallucinated (attribute)', 'supported', 'not settled (unverifiable)')
    >>> claim_words("prediction_error", "relation")
    'wrong (prediction error)'
    """
    shown = TRIHE_TO_VERDICT.get(verdict)
    if shown == HALLUCINATED and verdict != "prediction_error":
        return f"{HALLUCINATED} ({claim_label(verdict, kind)})"
    if verdict == "prediction_error":
        return f"{WRONG} (prediction error)"
    if shown == UNCERTAIN:
        return f"{NOT_SETTLED} ({verdict})"
    return verdict


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
    """A coloured pill for a verdict (unknown verdicts are shown as uncertain, "not judged" in the neutral blue)."""
    colour = VERDICT_COLOURS.get(verdict, NEUTRAL_COLOUR if verdict == "not judged" else VERDICT_COLOURS[UNCERTAIN])
    return (f'<span class="hs-badge" style="background:{colour};color:#fff;border-radius:8px;'
            f'padding:0 6px;font-size:0.85em">{esc(text if text is not None else verdict)}</span>')


def number_html(value: Any, digits: int = 3) -> str:
    """``presentation.number`` escaped for HTML (a value that is no number is shown as its escaped text)."""
    return esc(number(value, digits))


def empty_note(text: str) -> str:
    return f'<div class="hs-empty" style="color:#777;font-style:italic">{esc(text)}</div>'
