"""The image judge: an LVLM asked about each claim with the image (FaithScore's verification, Tri-HE's question).

Every other judge reads text (a scene graph, captions, an object list). This one shows the image to a
vision-language model (any backend ``run --model`` takes: ``transformers:…`` on the GPU, ``openai:MODEL@URL`` for
a vLLM / SGLang / OpenAI server) and asks, per claim, one question from a documented template
(``scoring.vlm_judge_template``):

- ``faithscore``: FaithScore's verification wording, the claim written as a short statement
  (``statement``): ``Statement: The cat is on the sofa. Is this statement is right according to the image? Please
  answer yes or no.`` (its wording as published, grammar included);
- ``tri-he``: Tri-HE's judge question (§3.3) asked of the image instead of the scene graph: ``Statement triplet:
  (cat, on, sofa) Can this triplet be directly obtained or reasonably inferred from the image? ...``.

The answer is read as yes or no (``read_answer``): an answer that opens with yes / no is that word, with the
backend's yes-probability where it gives one (transformers: the yes / no tokens' probabilities at the first
generated position; a server: its top log-probabilities, when it offers them); else the first yes / no in the
text; else, when the text names neither, the yes-probability alone (≥ 0.5 is yes). Tri-HE's verdict needs to know
what is wrong: a relation or attribute claim answered "no" asks, for each end that is a thing, whether it is in the
image (the same question an existence claim asks, so answered once per image and thing): an end that is not there
makes an object hallucination, else a relation one. Calls per response: its claims, plus those end checks.

Answers are cached by content (``caching``: the model, the image's sha256, the claim, the template and its version,
the answer cap), failures never: a backend error or an answer with neither word is recorded by the scoring
pipeline as the response's failure (no score stored; the next ``score`` asks again). Questions go to the backend
at once, ordered by image (a GPU batch shares its image; a server gets them side by side, up to
``scoring.vlm_judge_concurrency``).

``ReferenceThenImage`` puts a reference judge first: a claim the reference settles keeps its verdict, one it
leaves unverifiable goes to the image judge (``scoring.vlm_judge_unsettled = "image"``), and a sample with no
reference at all is judged by the image alone; each verdict names the judge that decided.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

from ..lexicon.predicates import PREPOSITIONS
from ..llm.errors import LLMConfigError, LLMError
from ..model import content_key
from .base import EXISTENCE_OBJECT, EXISTENCE_PREDICATE, JudgeReference, Triplet, TripletJudgement

if TYPE_CHECKING:
    from ..backends.base import Backend, GenerationResult
    from ..caching import ScoringCache

TEMPLATE_VERSION = "vlm-judge-1"  # changes whenever a template or the reading does: older answers are then unused
NAMESPACE = "vlm_judge"
# The answer cap: a yes / no and a few words of reason; a longer answer is read by its first yes / no.
ANSWER_TOKENS = 32
TEMPLATES: dict[str, str] = {
    "faithscore": "Statement: {statement} Is this statement is right according to the image? "
                  "Please answer yes or no.",
    "tri-he": "Statement triplet: ({s}, {p}, {o})\n\nCan this triplet be directly obtained or reasonably inferred "
             "from the image? Answer with one word: yes or no.",
}
_LEADING = re.compile(r"^\W*(yes|no)\b", re.IGNORECASE)
_ANY = re.compile(r"\b(yes|no)\b", re.IGNORECASE)


class ImageJudgeError(LLMError):
    """An image-judge question that got no usable answer (the backend failed, or the answer names neither word): a
    model call's failure, never the input's fault (``llm.errors.llm_failure`` reports it so)."""


def _article(noun: str) -> str:
    return "an" if noun[:1].lower() in "aeiou" else "a"


def statement(claim: Sequence[str]) -> str:
    """A claim written as the short statement FaithScore verifies.

    >>> statement(("dog", "is in", "the image")), statement(("cat", "is", "grey")), statement(("cat", "on", "sofa"))
    ('There is a dog in the image.', 'The cat is grey.', 'The cat is on the sofa.')
    >>> statement(("man", "holding", "umbrella")), statement(("woman", "wears", "hat"))
    ('The man is holding the umbrella.', 'The woman wears the hat.')
    """
    s, p, o = (part.strip() for part in claim)
    if (p, o) == (EXISTENCE_PREDICATE, EXISTENCE_OBJECT):
        return f"There is {_article(s)} {s} in the image."
    if p == "is":
        return f"The {s} is {o}."
    first = p.split()[0].lower() if p.split() else ""
    be = p.lower() in PREPOSITIONS or first in PREPOSITIONS or first.endswith("ing")
    return f"The {s} {'is ' if be else ''}{p} the {o}."


def read_answer(text: str, p_yes: float | None) -> tuple[bool, float | None] | None:
    """``(yes, probability)`` read off an answer; None when it says neither and no probability came with it.

    The probability is the first generated token's, so it is kept only where that token is the answer.

    >>> read_answer("Yes, the cat is there.", 0.93), read_answer("The statement is wrong: no.", 0.7)
    ((True, 0.93), (False, None))
    >>> read_answer("ASSISTANT cat table", 0.2), read_answer("I cannot tell.", None)
    ((False, 0.2), None)
    """
    lead = _LEADING.match(text or "")
    if lead:
        return lead.group(1).lower() == "yes", p_yes
    anywhere = _ANY.search(text or "")
    if anywhere:
        return anywhere.group(1).lower() == "yes", None
    if p_yes is not None:
        return p_yes >= 0.5, p_yes
    return None


@dataclass(frozen=True)
class ImageAnswer:
    """One question's answer: yes or no, the yes-probability where known, and the model's words."""

    yes: bool
    probability: float | None
    answer: str

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def model_identity(spec: str) -> str:
    """What an image judge's answers are known by: a served model without its URLs (a server's replicas and port
    change; the model does not).

    >>> model_identity("openai:Qwen/Qwen2.5-VL-7B-Instruct@http://gpu:8000/v1"), model_identity("transformers:x/y")
    ('openai:Qwen/Qwen2.5-VL-7B-Instruct', 'transformers:x/y')
    """
    kind, _, rest = spec.partition(":")
    if kind == "openai" and "@" in rest:
        return f"openai:{rest.rpartition('@')[0]}"
    return spec


def _result_answer(result: "GenerationResult", judge: str) -> ImageAnswer | ImageJudgeError:
    if not result.ok:
        return ImageJudgeError(f"the image judge {judge} failed: {result.error}")
    probs = (result.signals.get("answer") or {}).get("probs")
    read = read_answer(result.text, round(float(probs[0]), 4) if probs else None)
    if read is None:
        return ImageJudgeError(f"the image judge {judge} answered neither yes nor no: {result.text.strip()[:80]!r}")
    return ImageAnswer(read[0], read[1], result.text.strip())


def _claim_kind(claim: Sequence[str]) -> str:
    """What a claim is about: an object's presence, an attribute (or number) of one, or a relation.

    >>> _claim_kind(("dog", "is in", "the image")), _claim_kind(("cat", "is", "grey")), _claim_kind(("a", "on", "b"))
    ('object', 'attribute', 'relation')
    """
    if (claim[1], claim[2]) == (EXISTENCE_PREDICATE, EXISTENCE_OBJECT):
        return "object"
    return "attribute" if claim[1] == "is" else "relation"


def _end_checks(claim: Triplet) -> list[Triplet]:
    """The things a relation or attribute claim names, as existence claims (an attribute's value is no thing)."""
    s, p, o = claim
    if (p, o) == (EXISTENCE_PREDICATE, EXISTENCE_OBJECT):
        return []
    ends = [s] if p == "is" else [s, o]
    return [(e, EXISTENCE_PREDICATE, EXISTENCE_OBJECT) for e in dict.fromkeys(ends)]


class VLMJudge:
    """Each claim asked of an LVLM with the image (module docstring); ``name`` is ``vlm:<model>``."""

    judges_existence = True  # an object named in no relation is a claim the image can settle
    needs_image = True

    def __init__(self, backend: "Backend", model: str, *, template: str = "faithscore",
                 cache: "ScoringCache | None" = None) -> None:
        if template not in TEMPLATES:
            raise ValueError(f"unknown image-judge template {template!r}; choose {' | '.join(TEMPLATES)}")
        self.backend, self.model, self.template, self.cache = backend, model, template, cache
        self.name = f"vlm:{model}"
        self.calls = 0  # questions sent to the backend (not answered from a cache)
        # This process's answers (and this pass's failures, until the judgement that reads them reports them).
        self._answers: dict[str, ImageAnswer | ImageJudgeError] = {}
        self._checked = False

    def config(self) -> dict[str, Any]:
        return {"judge": "vlm", "model": self.model, "template": self.template, "version": TEMPLATE_VERSION,
                "answer_tokens": ANSWER_TOKENS}

    def question(self, claim: Sequence[str]) -> str:
        s, p, o = claim
        return TEMPLATES[self.template].format(statement=statement(claim), s=s, p=p, o=o)

    def _key(self, claim: Sequence[str], image_sha256: str) -> str:
        return content_key(NAMESPACE, self.model, image_sha256, list(claim), self.template, TEMPLATE_VERSION,
                           ANSWER_TOKENS)

    def _check_endpoint(self) -> None:
        """A server that is not there (or does not serve the model) fails at once, not after every retry."""
        check = getattr(self.backend, "check_endpoint", None)
        if check is not None and not self._checked:
            try:
                check()
            except LLMConfigError as exc:
                error = ImageJudgeError(f"the image judge {self.name}: {exc}")
                error.url = exc.url
                raise error from exc
            self._checked = True

    def ask(self, asks: Sequence[tuple[Sequence[str], bytes, str]]) -> list[ImageAnswer | ImageJudgeError]:
        """The answer to each ``(claim, image bytes, image sha256)``: remembered, cached, else asked (every new
        question in one ``generate`` call, ordered by image); successes are cached, failures only remembered until
        ``forget_failures``."""
        from ..backends.base import GenerationRequest, SignalRequest

        keys = [self._key(c, sha) for c, _, sha in asks]
        unknown = [k for k in dict.fromkeys(keys) if k not in self._answers]
        if self.cache is not None and unknown:
            for k, value in self.cache.get_many(unknown).items():
                self._answers[k] = ImageAnswer(**value)
        todo = {k: a for k, a in zip(keys, asks) if k not in self._answers}
        if todo:
            self._check_endpoint()
            order = sorted(todo, key=lambda k: todo[k][2])
            requests = [GenerationRequest(sample_id=k, prompt=self.question(todo[k][0]), image=todo[k][1],
                                          generation={"max_new_tokens": ANSWER_TOKENS, "do_sample": False},
                                          signals=SignalRequest(answer_candidates=("yes", "no"))) for k in order]
            self.calls += len(requests)
            results = self.backend.generate(requests)
            if len(results) != len(requests):
                raise RuntimeError(f"the image judge's backend returned {len(results)} answers to {len(requests)}")
            fresh = {k: _result_answer(r, self.name) for k, r in zip(order, results)}
            self._answers.update(fresh)
            good = [(k, NAMESPACE, a.to_dict()) for k, a in fresh.items() if isinstance(a, ImageAnswer)]
            if good and self.cache is not None and not self.cache.read_only:
                self.cache.put_many(good)
        return [self._answers[k] for k in keys]

    def forget_failures(self, keys: Sequence[str] | None = None) -> None:
        """Drop remembered failures (of ``keys``, or all): the next pass asks those questions again."""
        for k in list(self._answers if keys is None else keys):
            if isinstance(self._answers.get(k), ImageJudgeError):
                del self._answers[k]

    def _asks(self, claims: Sequence[Triplet], reference: JudgeReference) -> list[tuple[Triplet, bytes, str]]:
        if reference.image is None:
            raise ImageJudgeError(f"the image judge {self.name} needs the image, and this sample has none")
        sha = reference.image_sha256 or hashlib.sha256(reference.image).hexdigest()
        return [(tuple(c), reference.image, sha) for c in claims]  # type: ignore[misc]

    def warm(self, pairs: Sequence[tuple[Sequence[Triplet], JudgeReference]]) -> None:
        """Ask every question of many responses at once (both stages), so ``judge`` reads the answers."""
        asks = [a for claims, ref in pairs if ref.image is not None for a in self._asks(claims, ref)]
        first = self.ask(asks)
        self.ask([(end, image, sha) for (claim, image, sha), got in zip(asks, first)
                  if isinstance(got, ImageAnswer) and not got.yes for end in _end_checks(claim)])

    def judge(self, claims: Sequence[Triplet], reference: JudgeReference) -> list[TripletJudgement]:
        """One verdict per claim; ``ImageJudgeError`` naming every unusable answer (after all were asked)."""
        if not claims:
            return []
        asks = self._asks(claims, reference)
        answers = self.ask(asks)
        ends = {i: _end_checks(c) for i, (c, a) in enumerate(zip(claims, answers))
                if isinstance(a, ImageAnswer) and not a.yes}
        flat = [(e, asks[0][1], asks[0][2]) for i in ends for e in ends[i]]
        end_answers = dict(zip([e for e, _, _ in flat], self.ask(flat)))
        failed = [f"({', '.join(c)}): {a}" for c, a in zip(claims, answers) if isinstance(a, ImageJudgeError)]
        failed += [f"({', '.join(e)}): {a}" for e, a in end_answers.items() if isinstance(a, ImageJudgeError)]
        if failed:
            self.forget_failures([self._key(c, asks[0][2]) for c in [*claims, *end_answers]])
            raise ImageJudgeError(f"{len(failed)} image-judge questions got no usable answer (no score stored; "
                                  f"asked again by the next score): " + "; ".join(failed[:5]))
        out = [self._verdict(c, a, ends.get(i, []), end_answers) for i, (c, a) in  # type: ignore[arg-type]
               enumerate(zip(claims, answers))]
        if self.cache is not None and not self.cache.read_only:
            # Read: a cache that keeps them holds them; memory would only grow over a long-running app.
            for c in [*claims, *end_answers]:
                self._answers.pop(self._key(c, asks[0][2]), None)
        return out

    def _verdict(self, claim: Triplet, answer: ImageAnswer, ends: list[Triplet],
                 end_answers: dict[Triplet, Any]) -> TripletJudgement:
        said = f"{self.name} answered {answer.answer[:120]!r}"
        kind = _claim_kind(claim)
        if answer.yes:
            return TripletJudgement(tuple(claim), "supported", answer.probability, said, kind,  # type: ignore[arg-type]
                                    probability=answer.probability, judge=self.name)
        missing = [e[0] for e in ends if not end_answers[e].yes]
        if not ends or missing:
            why = f"; not in the image: {', '.join(missing)}" if missing else ""
            return TripletJudgement(tuple(claim), "object", answer.probability, said + why, "object",  # type: ignore[arg-type]
                                    probability=answer.probability, judge=self.name)
        return TripletJudgement(tuple(claim), "relation", answer.probability, said + f"; {' and '.join(e[0] for e in ends)}"
                                f" {'is' if len(ends) == 1 else 'are'} in the image", kind,  # type: ignore[arg-type]
                                probability=answer.probability, judge=self.name)


class ReferenceThenImage:
    """A reference judge first; what it leaves unverifiable, and every claim of a sample with no reference, the image
    judge decides. Each verdict names its judge; the reference judge's policy weighs what stays unverifiable."""

    needs_image = True

    def __init__(self, reference_judge: Any, image_judge: VLMJudge) -> None:
        self.reference_judge, self.image_judge = reference_judge, image_judge
        self.name = f"{reference_judge.name}+{image_judge.name}"
        self.judges_existence = bool(getattr(reference_judge, "judges_existence", False))

    def config(self) -> dict[str, Any]:
        return {**self.reference_judge.config(), "unsettled": "image judge", "image_judge": self.image_judge.config()}

    def hallucination_weight(self, verdict: str, closed: bool = True) -> float:
        policy = getattr(self.reference_judge, "hallucination_weight", None)
        if policy is not None:
            return float(policy(verdict, closed))
        return 1.0 if verdict in ("object", "relation") else 0.0

    def warm(self, pairs: Sequence[tuple[Sequence[Triplet], JudgeReference]]) -> None:
        warm = getattr(self.reference_judge, "warm", None)
        if warm is not None:
            warm([(claims, ref) for claims, ref in pairs if not ref.is_empty()])
        # Samples with no reference go to the image judge whole: their questions asked together now.
        self.image_judge.warm([(claims, ref) for claims, ref in pairs if ref.is_empty()])

    def judge(self, claims: Sequence[Triplet], reference: JudgeReference) -> list[TripletJudgement]:
        if reference.is_empty():
            return [dataclasses.replace(j, reason=f"no reference; {j.reason}")
                    for j in self.image_judge.judge(claims, reference)]
        out = [j if j.judge else dataclasses.replace(j, judge=self.reference_judge.name)
               for j in self.reference_judge.judge(claims, reference)]
        todo = [i for i, j in enumerate(out) if j.verdict == "unverifiable"]
        if todo and reference.image is not None:
            for i, j in zip(todo, self.image_judge.judge([claims[i] for i in todo], reference)):
                # The reference judge's first clause says why it is open; its weighing no longer applies.
                out[i] = dataclasses.replace(j, reason=f"{out[i].reason.split(';')[0]}; the image settles it: {j.reason}")
        return out
