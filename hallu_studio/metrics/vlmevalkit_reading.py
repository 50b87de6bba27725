"""VLMEvalKit's readings of an answer: a yes/no answer (its ``YOrN_Extraction``), which its MME, HallusionBench
and POPE scores rest on, and the option a multiple-choice answer chooses (its exact-matching ``can_infer``), which
its MCQ accuracies (ScienceQA, MMStar, MMBench …) rest on when no judge model is set.

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

**Multiple choice** (``vlmevalkit_choice``), the rule as VLMEvalKit had it when the score files of its
``assets/benchmarks`` were written (commit c03bc048, 2024): first the option letters (``can_infer_option``): an
answer holding one of the refusals VLMEvalKit lists is "Z" (no option); otherwise the marks ``.()[],:;!*#{}``
become spaces, the answer is split on white space, and when exactly one of the options' letters is among the
words (case as written, so the article "A" counts) that letter is the choice; when none is and "Z" is, "Z".
Failing that, the option texts (``can_infer_text``): the one option whose text, lower-cased, is in the lower-cased
answer (anywhere, even inside a word); none or several: no choice. No choice (``None``) counts wrong. Options
with no text (a lost cell) are no options. Later VLMEvalKit (2025) also wants the letter among the last five words,
reads "the answer is B" in a longer answer, and drops the text match for long answers; the files it wrote before
that are read with this rule.

>>> options = {"A": "a liquid", "B": "a gas", "C": "a solid"}
>>> [vlmevalkit_choice(a, options) for a in ("B", "(C) a solid", "It is a gas.", "A gas or a solid? B.", "Maybe")]
['B', 'C', 'B', None, None]
>>> vlmevalkit_choice("A molecule with the formula C is carbon.", {"A": "C", "B": "C2", "C": "CCl4"})
'A'
"""

from __future__ import annotations

import re
from typing import Mapping

# The marks VLMEvalKit's process_punctuation strips (VQA's list; a period is handled apart).
_MARKS: tuple[str, ...] = (";", "/", "[", "]", '"', "{", "}", "(", ")", "=", "+", "\\", "_", "-", ">", "<", "@",
                           "`", ",", "?", "!")
_DIGIT_COMMA_DIGIT = re.compile(r"(\d)(,)(\d)")
_LONE_PERIOD = re.compile(r"(?<!\d)\.(?!\d)")

READING = "VLMEvalKit YOrN_Extraction (yes / no / unknown)"
CHOICE_READING = "VLMEvalKit can_infer (exact matching, as of c03bc048)"
# Answers VLMEvalKit's can_infer_option reads as "no option" (its reject_to_answer list).
_REFUSALS: tuple[str, ...] = ("Sorry, I can't help with images of people yet.", "I can't process this file.",
                              "I'm sorry, but without the image provided", "Cannot determine the answer")
_SPACED = str.maketrans({mark: " " for mark in ".()[],:;!*#{}"})
NO_OPTION = "Z"  # VLMEvalKit's letter for "no option", never an option's own


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


def vlmevalkit_choice(response: str, options: Mapping[str, str]) -> str | None:
    """The letter VLMEvalKit's exact-matching ``can_infer`` reads off ``response`` ("Z": a refusal), or None when
    it finds no option; ``options`` maps each option's letter to its text (see the module docstring).

    >>> vlmevalkit_choice("B. armored catfish", {"A": "discus", "B": "armored catfish"})
    'B'
    >>> xy = {"A": "x", "B": "y"}
    >>> vlmevalkit_choice("Cannot determine the answer.", xy), vlmevalkit_choice("A B", xy)
    ('Z', None)
    """
    text = str(response)
    options = {letter: str(option) for letter, option in options.items() if str(option)}
    if any(refusal in text for refusal in _REFUSALS):
        return NO_OPTION
    words = text.translate(_SPACED).split()
    named = [letter for letter in options if letter in words]
    if len(named) == 1:
        return named[0]
    if not named and NO_OPTION in words:
        return NO_OPTION
    lowered = text.lower()
    found = [letter for letter, option in options.items() if option.lower() in lowered]
    return found[0] if len(found) == 1 else None
