"""Tri-HE's LLM judge: two questions per claim to an LLM (§3.3, Appendix A.2).

1. Can the triplet be directly obtained or inferred from the image's scene graph
   (and the question's reference answer)? yes / no.
2. Only for "no": which part is wrong, object1, object2 or relation? (object1 or
   object2 → object hallucination; relation → relation hallucination.)

The paper's prompt is a figure not reproduced in its text; the prompts below follow
its description (``PROMPT_VERSION`` changes whenever they do, so cached answers of
older prompts are never reused). Each question asks for structured output (a JSON enum);
a server without it answers in words, read leniently.

An answer that names no choice, or one cut at its cap of ``JUDGE_ANSWER_TOKENS`` (finish_reason
"length"), is not a verdict: ``judge`` still asks every other question of the response (their
answers are cached), then raises ``LLMAnswerError`` naming each claim whose answer was unusable. The
scoring pipeline records the response as failed (stage ``score:trihe``) and stores no score for it, so
the next ``score`` asks exactly those questions again (the rest come from the cache). This judge
never gives the verdict ``unparseable``: that verdict, counted in Hallu_Q's denominator only as
Tri-HE's released code counts an unreadable answer, comes only from scores made before this
(``config()["unusable_answer"]`` tells the two apart) or from imported judgements.
An LLM that cannot be reached raises ``LLMError`` (after the client's retries) likewise.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from ..llm import LLMAnswerError, LLMClient, LLMError, LLMRequest
from ..llm.dispatch import JUDGE_ANSWER_TOKENS
from .base import JudgeReference, Triplet, TripletJudgement

PROMPT_VERSION = "trihe-judge-1"

_SYSTEM = ("You judge whether statements about an image are supported by its scene graph. "
           "The scene graph lists every object and relation that exists in the image as triplets "
           "(object1, relation, object2).")

_Q1 = """Scene graph triplets:
{graph}
{qa}
Statement triplet: ({s}, {p}, {o})

Can this triplet be directly obtained or reasonably inferred from the scene graph above?
Answer with one word: yes or no."""

_Q2 = """Scene graph triplets:
{graph}
{qa}
Statement triplet: ({s}, {p}, {o})

This triplet is NOT supported by the scene graph. Which part of it is wrong?
Answer with exactly one of: object1, object2, relation."""

_YES_NO = re.compile(r"\b(yes|no)\b", re.IGNORECASE)
_PART = re.compile(r"\b(object\s*1|object\s*2|relation)\b", re.IGNORECASE)


def _graph_text(reference: JudgeReference) -> str:
    lines = [f"({s}, {p}, {o})" for s, p, o in reference.triplets]
    listed = {n for s, _, o in reference.triplets for n in (s, o)}
    extra = [n for n in reference.objects if n not in listed]
    if extra:
        lines.append("Other objects in the image: " + ", ".join(dict.fromkeys(extra)))
    return "\n".join(lines) or "(empty)"


def _qa_text(reference: JudgeReference) -> str:
    parts = []
    if reference.question:
        parts.append(f"Question about the image: {reference.question}")
    if reference.answer:
        parts.append(f"Reference answer: {reference.answer}")
    return "\n".join(parts)


def parse_supported(answer: str) -> bool | None:
    m = _YES_NO.search(answer)
    return None if m is None else m.group(1).lower() == "yes"


def parse_wrong_part(answer: str) -> str | None:
    m = _PART.search(answer)
    if m is None:
        return None
    return "relation" if m.group(1).lower() == "relation" else "object"


def _enum_schema(key: str, choices: Sequence[str]) -> dict[str, Any]:
    return {"type": "object", "properties": {key: {"type": "string", "enum": list(choices)}}, "required": [key],
            "additionalProperties": False}


SUPPORTED_SCHEMA = _enum_schema("answer", ("yes", "no"))
WRONG_PART_SCHEMA = _enum_schema("wrong_part", ("object1", "object2", "relation"))


def _read_choice(key: str, parse: Any) -> Any:
    """The structured answer ``{key: choice}`` read by ``parse``; ``ValueError`` for any other shape."""
    def read(value: Any) -> Any:
        got = parse(value[key]) if isinstance(value, dict) and isinstance(value.get(key), str) else None
        if got is None:
            raise ValueError(f"expected {{{key!r}: ...}} with one of the choices, got {str(value)[:160]!r}")
        return got
    return read


def _required(parse: Any, what: str) -> Any:
    """``parse`` turned into a client check: an answer it cannot read is a ``ValueError`` (and not cached)."""
    def check(answer: str) -> Any:
        value = parse(answer)
        if value is None:
            raise ValueError(f"no {what} in the answer")
        return value
    return check


def _unusable_error(unusable: list[tuple[Triplet, str, LLMAnswerError]], claims: int) -> LLMAnswerError:
    """One error naming every claim whose answer could not be used, and why (cut, or unreadable)."""
    parts = [f"({', '.join(claim)}) {question}: {'cut at its length limit' if e.truncated else 'unreadable'}: "
             f"{e.answer.strip()[:80]!r}" for claim, question, e in unusable]
    return LLMAnswerError(f"the LLM judge's answers about {len(unusable)} of {claims} claims are not usable (no "
                          f"score stored; asked again by the next score): " + "; ".join(parts),
                          unusable[0][2].answer, truncated=any(e.truncated for _, _, e in unusable))


class LLMJudge:
    name = "llm"

    def __init__(self, client: LLMClient, *, prompt_version: str = PROMPT_VERSION) -> None:
        self.client = client
        self.prompt_version = prompt_version

    def config(self) -> dict[str, Any]:
        # "unusable_answer": an unreadable or cut answer fails the response and is asked again; scores made
        # before, when it was the verdict 'unparseable', keep their own key.
        return {"judge": self.name, "llm": self.client.name, "prompt_version": self.prompt_version,
                "unusable_answer": "asked again"}

    def _messages(self, template: str, claim: Triplet, graph: str, qa: str) -> list[dict[str, str]]:
        s, p, o = claim
        return [{"role": "system", "content": _SYSTEM},
                {"role": "user", "content": template.format(graph=graph, qa=qa, s=s, p=p, o=o)}]

    def _ask(self, template: str, namespace: str, schema: dict[str, Any], read: Any, lenient: Any,
             claims: Sequence[Triplet], graph: str, qa: str) -> list[Any]:
        """Parsed answers in claim order; an unreadable answer comes back as its ``LLMAnswerError``."""
        answers = self.client.complete_many(
            [LLMRequest(self._messages(template, c, graph, qa), namespace, self.prompt_version, json_schema=schema,
                        params={"max_tokens": JUDGE_ANSWER_TOKENS}, check=read, lenient=lenient) for c in claims])
        for a in answers:
            if isinstance(a, LLMError) and not isinstance(a, LLMAnswerError):
                raise a  # an unreachable LLM: the pipeline records the item as failed
        return answers

    def judge(self, claims: Sequence[Triplet], reference: JudgeReference) -> list[TripletJudgement]:
        """Both questions for every claim; ``LLMAnswerError`` when any answer was unusable (after all were asked)."""
        if not claims:
            return []
        graph, qa = _graph_text(reference), _qa_text(reference)
        first = self._ask(_Q1, "trihe.supported", SUPPORTED_SCHEMA, _read_choice("answer", parse_supported),
                          _required(parse_supported, "yes/no"), claims, graph, qa)
        out: list[TripletJudgement | None] = [None] * len(claims)
        unusable: list[tuple[Triplet, str, LLMAnswerError]] = []
        rejected = []
        for i, (claim, supported) in enumerate(zip(claims, first)):
            if isinstance(supported, LLMAnswerError):
                unusable.append((claim, "supported?", supported))
            elif supported:
                out[i] = TripletJudgement(tuple(claim), "supported", None, "LLM: supported by the scene graph")
            else:
                rejected.append(i)
        # The second question is asked even when some first answers were unusable: its answers are cached,
        # so the next pass asks only what failed.
        second = self._ask(_Q2, "trihe.wrong_part", WRONG_PART_SCHEMA, _read_choice("wrong_part", parse_wrong_part),
                           _required(parse_wrong_part, "object1/object2/relation"),
                           [claims[i] for i in rejected], graph, qa) if rejected else []
        for i, part in zip(rejected, second):
            if isinstance(part, LLMAnswerError):
                unusable.append((claims[i], "which part is wrong?", part))
            else:
                out[i] = TripletJudgement(tuple(claims[i]), part, None, f"LLM: not supported; the {part} is wrong")
        if unusable:
            raise _unusable_error(unusable, len(claims))
        return [j for j in out if j is not None]
