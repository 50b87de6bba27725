"""VLMEvalKit's reading of a yes/no answer (its ``YOrN_Extraction``), which its MME, HallusionBench and POPE
scores rest on.

The answer is lower-cased, its punctuation removed the way VLMEvalKit's ``process_punctuation`` does (VQA's
rule), and split on white space: "yes" among the words and "no" not → yes; "no" and not "yes" → no; both or
neither → unknown. An unknown answer counts wrong. (VLMEvalKit can send the unknown ones to an LLM judge; a run
evaluated with exact matching, as the score files in its ``assets`` were, keeps them unknown, and its
``_auxmatch`` table's ``extracted`` column is this reading, row for row.)

The punctuation rule is kept as VLMEvalKit has it, quirks included: a mark next to a space (or any mark, once
the text has a digit-comma-digit such as "1,000") is deleted, otherwise it becomes a space; a period that is
not between digits is deleted. So "Yes,it is" reads "yes it is", but "Yes, no doubt" reads "yes no doubt"
(unknown), and "No.There is" reads "nothere is" (unknown).

>>> [vlmevalkit_yes_no(a) for a in ("Yes, there is a dog.", "No", "There is no dog.", "Yes and no.", "Maybe.")]
['yes', 'no', 'no', 'unknown', 'unknown']
>>> [vlmevalkit_yes_no(a) for a in ("Yes,it is", "No.There is one.", "(no)", "yes-no")]
['yes', 'unknown', 'no', 'unknown']
"""

from __future__ import annotations

import re

# The marks VLMEvalKit's process_punctuation strips (VQA's list; a period is handled apart).
_MARKS: tuple[str, ...] = (";", "/", "[", "]", '"', "{", "}", "(", ")", "=", "+", "\\", "_", "-", ">", "<", "@",
                           "`", ",", "?", "!")
_DIGIT_COMMA_DIGIT = re.compile(r"(\d)(,)(\d)")
_LONE_PERIOD = re.compile(r"(?<!\d)\.(?!\d)")

READING = "VLMEvalKit YOrN_Extraction (yes / no / unknown)"


def strip_punctuation(text: str) -> str:
    """``text`` with punctuation removed as VLMEvalKit's ``process_punctuation`` removes it.

    >>> strip_punctuation("yes, it's (a) 1,000-piece puzzle.")
    "yes it's a 1000piece puzzle"
    """
    out = text
    numeric_comma = _DIGIT_COMMA_DIGIT.search(text) is not None
    for mark in _MARKS:
        # The test reads the original text, as VLMEvalKit's does: one mark beside a space anywhere means every
        # occurrence of that mark is deleted rather than spaced.
        if f"{mark} " in text or f" {mark}" in text or numeric_comma:
            out = out.replace(mark, "")
        else:
            out = out.replace(mark, " ")
    return _LONE_PERIOD.sub("", out)


def vlmevalkit_yes_no(response: str) -> str:
    """"yes", "no" or "unknown", as VLMEvalKit's ``YOrN_Extraction`` reads ``response``."""
    words = strip_punctuation(str(response).lower()).split()
    said_yes, said_no = "yes" in words, "no" in words
    if said_yes and not said_no:
        return "yes"
    if said_no and not said_yes:
        return "no"
    return "unknown"
